"""What isolating builds and programs costs (issue 27): this tree against a baseline checkout.

Measured in the same run, alternating the two trees round by round so that load on the machine
hits both alike, each measurement in a fresh interpreter that imports the tree it measures:

* **program start**: from the referee's spawn of a program to its first answer (the launcher,
  its layers, a PID namespace and a leased uid in this tree, the exec, the runtime's start,
  ``start_game`` and ``ready``), for a node bot (examples/shed.js) and a compiled C++ bot (the
  ``arena new --lang cpp`` kit, compiled once here); and its end (kill to reaped);
* **build**: the C++ kit's build (``g++ -O2``) through ``run_build``: in this tree a tmpfs
  folder in a PID namespace, read back after it; in the baseline a host folder.

    python benchmarks/isolation.py --baseline DIR [--starts 10] [--builds 5] [--json]

``DIR`` is a checkout of the code to compare against (``git worktree add /tmp/base main``, or
``git archive main | tar -x -C /tmp/base``). Run as root (the sandbox's layers need it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT / "arena" / "authoring" / "kits" / "cpp"

#: Run in a fresh interpreter with the measured tree first on sys.path: argv = tree, what, reps, stage.
PROBE = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from arena.game.rules import CONTEST
from arena.sandbox import Limits
from arena.sandbox.programs.process import ProgramProcess, Runtime, node_runtime
what, reps, stage = sys.argv[2], int(sys.argv[3]), sys.argv[4]
out = {"start": [], "end": []}
if what == "build":
    from arena.sandbox.programs.build import run_build
    files = {name: open(os.path.join(stage, name), "rb").read() for name in ("bot.toml", "bot.cpp")}
    for _ in range(reps):
        t = time.perf_counter()
        built = run_build("g++ -O2 -std=c++17 -o bot bot.cpp", files, "bench")
        out["start"].append(time.perf_counter() - t)
        assert "bot" in built
else:
    limits = Limits()
    runtime = node_runtime(limits, "bot.js") if what == "js" else Runtime("cpp", ("./bot",), (("LANG", "C.UTF-8"),))
    hello = {"type": "start_game", "protocol": 1, "game": 1, "seat": 0, "players": ["a", "b"],
             "rules": CONTEST.to_dict(), "seed": 1}
    for _ in range(reps):
        t = time.perf_counter()
        proc = ProgramProcess(stage, runtime, limits)
        proc.send(hello)
        assert b"ready" in proc.recv()
        t1 = time.perf_counter()
        proc.kill()
        out["start"].append(t1 - t)
        out["end"].append(time.perf_counter() - t1)
print(json.dumps(out))
"""


def stages(tmp: Path) -> dict[str, Path]:
    """Read-only stage folders for the node bot, the compiled C++ bot and the build's input."""
    js, cpp, src = tmp / "js", tmp / "cpp", tmp / "src"
    for folder in (js, cpp, src):
        folder.mkdir()
    shutil.copy(ROOT / "examples" / "shed.js", js / "bot.js")
    for name in ("bot.toml", "bot.cpp"):
        shutil.copy(KIT / name, src / name)
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", str(cpp / "bot"), str(KIT / "bot.cpp")], check=True)
    for folder in (js, cpp):
        for path in folder.iterdir():
            path.chmod(0o555)
        folder.chmod(0o555)
    return {"js": js, "cpp": cpp, "build": src}


def measure(tree: Path, what: str, reps: int, stage: Path) -> dict[str, list[float]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tree), what, str(reps), str(stage)],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree} {what}: {done.stderr.strip().splitlines()[-1:]}")
    result: dict[str, list[float]] = json.loads(done.stdout)
    return result


def run(baseline: Path, starts: int, builds: int, rounds: int = 3) -> dict[str, Any]:
    trees = {"baseline": baseline, "this tree": ROOT}
    samples: dict[tuple[str, str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = stages(Path(tmp))
        try:
            for _ in range(rounds):  # alternate the trees: load hits both alike
                for what, reps in (("js", starts), ("cpp", starts), ("build", builds)):
                    for name, tree in trees.items():
                        got = measure(tree, what, max(1, reps // rounds), where[what])
                        for key, values in got.items():
                            samples.setdefault((what, key, name), []).extend(values)
        finally:
            for folder in where.values():
                folder.chmod(0o755)
    rows = {}
    for (what, key, name), values in samples.items():
        if values:
            rows.setdefault((what, key), {})[name] = statistics.median(values) * 1e3
            rows[(what, key)][f"{name} n"] = len(values)
    return {f"{what} {key}": row for (what, key), row in rows.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout of the code to compare against")
    parser.add_argument("--starts", type=int, default=12)
    parser.add_argument("--builds", type=int, default=6)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root: the sandbox's layers need it")
    doc = run(args.baseline.resolve(), args.starts, args.builds)
    if args.json:
        print(json.dumps(doc, indent=2))
        return
    names = {
        "js start": "node bot: spawn to first answer",
        "js end": "node bot: kill to reaped",
        "cpp start": "C++ bot: spawn to first answer",
        "cpp end": "C++ bot: kill to reaped",
        "build start": "C++ kit build (g++ -O2)",
    }
    table = [
        [
            names.get(key, key),
            f"{row['baseline']:.1f}",
            f"{row['this tree']:.1f}",
            f"{row['this tree'] / row['baseline']:.2f}",
            row["this tree n"],
        ]
        for key, row in doc.items()
    ]
    print(tabulate(table, headers=["ms (median)", "baseline", "this tree", "ratio", "n each"]))


if __name__ == "__main__":
    main()
