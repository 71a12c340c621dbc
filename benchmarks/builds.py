"""What one author's build costs the others on a contest server, and a build-cache hit against a
build (issue 27, item 3).

One server, started as an organiser starts it (``arena contest init``, ``invite``, ``arena serve``
as a subprocess, ``--check-games 1``), two of ann's Python bots on its ladder. Measured in the same
run, so each number has its peer beside it:

* **the ladder's pace**: games recorded a second in a window before any build, against the same
  in the first third of ben's bot program's build (``--build-seconds``; its build command sleeps:
  no CPU, so what slows the ladder is only where the build runs), the same entrants on the ladder;
  and every build of that version until it has played a ladder game (the code before built it
  again in the ladder's loop), each with the ladder's games recorded while it ran;
* **another author's check**: the time from cat's upload of a plain Python bot to its clean
  check, ``--checks`` uploads one after another while ben's build runs (after the pace's window),
  against ``--checks`` alone before the build and as many after it;
* **a C++ upload**: the ``arena new --lang cpp`` kit's upload to its clean check (its build, then
  its check), for comparing trees;
* **a build against a build-cache hit**: the ``arena new --lang cpp`` kit's build (``g++ -O2``,
  :func:`~arena.sandbox.programs.build.run_build`) against reading its output back from a
  :class:`~arena.sandbox.programs.buildcache.BuildCache` (checked against its sha256).

    python benchmarks/builds.py [--build-seconds 60] [--checks 5] [--json]

Run as root (builds run sandboxed only as root).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]
sys.path.insert(0, str(ROOT))

from arena.trust.botfolder import bundle  # noqa: E402
from arena.trust.botsource import read_bot_file  # noqa: E402


def arena(*args: str) -> str:
    done = subprocess.run([*ARENA, *args], capture_output=True, text=True, cwd=ROOT, check=True)
    return done.stdout


def python_bot(name: str) -> bytes:
    return (ROOT / "bots" / "greedy.py").read_text().replace('name = "greedy"', f'name = "{name}"').encode()


def cpp_kit(name: str) -> bytes:
    """The ``arena new --lang cpp`` kit's bundle as the bot ``name`` (its build: ``g++ -O2``)."""
    kit = ROOT / "arena" / "authoring" / "kits" / "cpp"
    files = {f: (kit / f).read_bytes() for f in ("bot.toml", "bot.cpp")}
    files["bot.toml"] = files["bot.toml"].replace(b'name = "NAME"', f'name = "{name}"'.encode())
    return bundle("program", tuple(sorted(files.items()))).encode()


def program(name: str, build: str) -> bytes:
    files = dict(read_bot_file(ROOT / "examples" / "kits" / "python-stdio").files)
    toml = files["bot.toml"].decode().replace('name = "stdio-py"', f'name = "{name}"') + f"build = {build!r}\n"
    return bundle("program", tuple(sorted({**files, "bot.toml": toml.encode()}.items()))).encode()


def shells(mark: str) -> list[int]:
    """The live build shells (``/bin/sh -c BUILD``) whose command holds ``mark``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"/bin/sh\0-c\0") and mark.encode() in cmdline:
                found.append(int(entry))
    return found


class Contest:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        arena("contest", "init", str(folder))
        self.tokens = {who: arena("contest", "invite", str(folder), who).strip().rsplit(": ", 1)[1] for who in "abc"}
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(
            [*ARENA, "serve", str(folder), "--port", str(self.port), "--check-games", "1"],
            cwd=ROOT,
            stderr=subprocess.DEVNULL,
        )
        self.wait(lambda: self.get("/api/leaderboard", "a")[0] == 200, 60)

    def request(self, method: str, path: str, who: str, body: bytes | None = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", body, headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")
        except (urllib.error.URLError, ConnectionError):
            return 0, None

    def get(self, path: str, who: str) -> tuple[int, Any]:
        return self.request("GET", path, who)

    def upload(self, who: str, data: bytes, name: str) -> int:
        status, answer = self.request("POST", f"/api/submissions?name={name}", who, data)
        assert status == 202, answer
        return int(answer["id"])

    def status(self, who: str, sid: int) -> str:
        return str(self.get(f"/api/submissions/{sid}", who)[1]["status"])

    def games(self) -> int:
        db = sqlite3.connect(f"file:{self.folder}/contest.db?mode=ro", uri=True)
        try:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        finally:
            db.close()

    def played(self, bot: str) -> int:
        bots = {b["bot"]: b for b in self.get("/api/leaderboard", "a")[1]["bots"]}
        return int(bots.get(bot, {}).get("games", 0))

    @staticmethod
    def wait(condition: Any, bound: float) -> float:
        start = time.monotonic()
        while not condition():
            if time.monotonic() - start > bound:
                raise SystemExit(f"waited {bound:g} s")
            time.sleep(0.05)
        return time.monotonic() - start

    def check_time(self, version: int) -> float:
        """Seconds from cat's upload of a new version of catbot (the ladder's entrants stay the
        same: each clean version replaces the last) to its clean check."""
        start = time.monotonic()
        sid = self.upload("c", python_bot("catbot") + f"# version {version}\n".encode(), "catbot.py")
        self.wait(lambda: self.status("c", sid) == "clean", 300)
        return time.monotonic() - start

    def stop(self) -> None:
        self.proc.send_signal(2)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def pace(cup: Contest, seconds: float) -> float:
    """Ladder games recorded a second over the next ``seconds``."""
    g0, t0 = cup.games(), time.monotonic()
    time.sleep(seconds)
    return (cup.games() - g0) / (time.monotonic() - t0)


class Builds(threading.Thread):
    """Every build shell of ``mark`` while it lives: its pid -> [first seen, last seen, the ladder's
    games then, and last] (looked at every 0.5 s)."""

    def __init__(self, cup: Contest, mark: str) -> None:
        super().__init__(daemon=True)
        self.cup, self.mark = cup, mark
        self.seen: dict[int, list[float]] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            live = shells(self.mark)
            if live:
                now, games = time.monotonic(), self.cup.games()
                for pid in live:
                    self.seen.setdefault(pid, [now, now, games, games])[1::2] = [now, games]

    def alive(self, pids: set[int]) -> bool:
        return bool(pids & set(shells(self.mark)))


def server_numbers(build_seconds: float, checks: int) -> dict[str, Any]:
    """The ladder's pace before and during ben's build, with the same entrants and nothing else
    running (the window opens as the build starts and closes before cat's uploads); then cat's
    checks during the rest of the build, against the same alone before it; and every build of
    ben's version, with the ladder's games recorded while it ran, until the version has played."""
    window = min(20.0, build_seconds / 3)
    with tempfile.TemporaryDirectory() as tmp:
        cup = Contest(Path(tmp) / "cup")
        try:
            for name in ("ann1", "ann2"):
                cup.upload("a", python_bot(name), f"{name}.py")
            start = time.monotonic()  # a C++ upload to its clean check: its build, then its check
            cpp = cup.upload("b", cpp_kit("cppbot"), "cppbot")
            cup.wait(lambda: cup.status("b", cpp) in ("clean", "failed"), 600)
            cpp_s, cpp_status = time.monotonic() - start, cup.status("b", cpp)
            alone = [cup.check_time(i) for i in range(checks)]
            cup.wait(lambda: cup.played("catbot") > 0, 300)
            before = pace(cup, window)
            mark = f"bench-{uuid.uuid4().hex[:8]}"
            watch = Builds(cup, mark)
            watch.start()
            cup.upload("b", program("benprog", f"sleep {build_seconds:g}; : {mark}"), "benprog")
            cup.wait(lambda: shells(mark), 120)
            first = set(shells(mark))
            during_pace = pace(cup, window)
            during = [cup.check_time(checks + i) for i in range(checks)]
            checked_before_the_build_ended = watch.alive(first)
            cup.wait(lambda: cup.played("benprog") >= 1 and not shells(mark), 3 * build_seconds + 300)
            watch.done.set()
            watch.join()
            alone += [cup.check_time(2 * checks + i) for i in range(checks)]  # alone again: drift shows
        finally:
            cup.stop()
    return {
        "ladder_games_per_s_before": before,
        "ladder_games_per_s_while_building": during_pace,
        "builds": [{"seconds": b[1] - b[0], "ladder_games_meanwhile": int(b[3] - b[2])} for b in watch.seen.values()],
        "check_s_alone": alone,
        "check_s_while_building": during,
        "checks_done_before_the_build_ended": checked_before_the_build_ended,
        "cpp_upload_to_check_s": cpp_s,
        "cpp_check": cpp_status,
    }


def cache_numbers(reps: int) -> dict[str, Any]:
    from arena.sandbox.programs.build import run_build
    from arena.sandbox.programs.buildcache import BuildCache, build_key

    kit = ROOT / "arena" / "authoring" / "kits" / "cpp"
    files = {name: (kit / name).read_bytes() for name in ("bot.toml", "bot.cpp")}
    command = "g++ -O2 -std=c++17 -o bot bot.cpp"
    builds, loads = [], []
    with tempfile.TemporaryDirectory() as tmp:
        cache = BuildCache(tmp)
        key = build_key(command, files)
        for _ in range(reps):
            t = time.perf_counter()
            built = run_build(command, files, "bench")
            builds.append(time.perf_counter() - t)
        digest = cache.save(key, built)
        for _ in range(reps * 4):
            t = time.perf_counter()
            assert cache.load(key, digest) == built
            loads.append(time.perf_counter() - t)
    return {"build_s": builds, "cache_hit_s": loads, "built_bytes": sum(len(v) for v in built.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-seconds", type=float, default=60.0)
    parser.add_argument("--checks", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root: builds run sandboxed only as root")
    found = server_numbers(opts.build_seconds, opts.checks)
    try:
        found.update(cache_numbers(5))
    except ImportError:  # a tree without the build cache (the code before it): its server numbers only
        found.update(build_s=[1.0], cache_hit_s=[float("nan")], built_bytes=0)
    if opts.json:
        print(json.dumps(found, indent=2))
        return
    med = statistics.median
    before, during = found["ladder_games_per_s_before"], found["ladder_games_per_s_while_building"]
    alone, busy = med(found["check_s_alone"]), med(found["check_s_while_building"])
    build, hit = med(found["build_s"]), med(found["cache_hit_s"])
    rows = [
        ["ladder games/s", f"{before:.2f} before", f"{during:.2f} while building", f"{during / before:.2f}"],
        ["other check (s, median)", f"{alone:.2f} alone", f"{busy:.2f} while building", f"{busy / alone:.2f}"],
        ["C++ kit's build (median)", f"{build:.3f} s build", f"{hit * 1000:.2f} ms cache hit", f"1/{build / hit:.0f}"],
    ]
    print(tabulate(rows, headers=["", "peer", "measured", "ratio"]))
    builds = "; ".join(f"{b['seconds']:.0f} s, {b['ladder_games_meanwhile']} games" for b in found["builds"])
    print(
        f"ben's builds (how long, the ladder's games meanwhile): {builds}; cat's checks during it done before it "
        f"ended: {found['checks_done_before_the_build_ended']}; checks alone "
        f"{', '.join(f'{x:.2f}' for x in found['check_s_alone'])} s, during "
        f"{', '.join(f'{x:.2f}' for x in found['check_s_while_building'])} s; "
        f"the C++ kit's upload to its {found['cpp_check']} check {found['cpp_upload_to_check_s']:.2f} s"
    )


if __name__ == "__main__":
    main()
