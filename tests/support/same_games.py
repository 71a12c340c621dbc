"""Play fixed tournaments, matches and checks with the arena this interpreter imports, and write
a digest of their standings and records (JSON), to compare two versions of the code (a change
of shape that must not change a game: issue 28):

    git archive OLD | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old .venv/bin/python tests/support/same_games.py old.json
    .venv/bin/python tests/support/same_games.py new.json && cmp old.json new.json

Covers: a tournament at 2-6 seats with file bots; one with programs (a .js bot, examples/shed.js,
a C++ kit of `arena new --lang cpp`); the teams variant; `arena play` with streams (plain, --sprt,
--workers 2); `arena check` of a file bot and of a program.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import arena

ROOT = Path(arena.__file__).resolve().parent.parent
EX = ROOT / "examples"

JS_BOT = r"""
"use strict";
// A plain protocol v1 bot: the cheapest playable card, a draw when it must, finish when it may.
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
let view = null;
function next() {
  if (view.puttable.length > 0) {
    const c = view.puttable[0];
    send(c.startsWith("j") ? {action: "put", card: c, suit: "h"} : {action: "put", card: c});
  } else if (view.can_finish) send({action: "finish"});
  else send({action: "draw"});
}
lines.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.type === "start_game") send({type: "ready"});
  else if (m.type === "move" || (m.type === "ok" && m.view)) { view = m.view; next(); }
  else if (m.type === "error") send({action: "finish"});
});
"""


def arena_cmd(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONHASHSEED="0")
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, env=env, capture_output=True, text=True)


def folder_digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.jsonl"))}


def standings(doc: object) -> object:
    """The standings document without what depends on the machine's speed."""
    if isinstance(doc, dict):
        return {k: standings(v) for k, v in doc.items() if k not in {"seconds", "elapsed", "duration", "time"}}
    if isinstance(doc, list):
        return [standings(v) for v in doc]
    return doc


def tournament(work: Path, name: str, *args: str) -> dict[str, object]:
    replays = work / f"{name}-replays"
    run = arena_cmd(
        "tournament", *args, "--seed", "20260", "-j", "1", "-q", "--json", "--db", f"{name}.sqlite",
        "--replays", str(replays), cwd=work,
    )  # fmt: skip
    if run.returncode != 0:
        raise SystemExit(f"{name}: exit {run.returncode}: {run.stderr[-2000:]}")
    doc = json.loads(run.stdout)
    return {"standings": standings(doc), "records": folder_digest(replays), "games": len(list(replays.glob("*.jsonl")))}


def play(work: Path, name: str, *args: str) -> dict[str, object]:
    record = work / f"{name}.jsonl"
    run = arena_cmd("play", *args, "--seed", "31", "-q", "--json", "--replay", str(record), cwd=work)
    if run.returncode != 0:
        raise SystemExit(f"{name}: exit {run.returncode}: {run.stderr[-2000:]}")
    return {"standings": standings(json.loads(run.stdout)), "record": hashlib.sha256(record.read_bytes()).hexdigest()}


def check(work: Path, name: str, bot: str) -> dict[str, object]:
    run = arena_cmd("check", bot, "--json", "--seed", "5", cwd=work)
    doc = json.loads(run.stdout)
    return {k: doc[k] for k in ("clean", "problems", "faults", "tables", "seed", "bot", "sha256")} | {
        "moves": doc["move_time"]["moves"]
    }


def main() -> None:
    out = Path(sys.argv[1])
    work = Path(tempfile.mkdtemp(prefix="same-games-"))
    try:
        for f in ("counter.py", "tablesize.py", "burner.py", "shed.js"):
            shutil.copy(EX / f, work / f)
        (work / "plain.js").write_text(JS_BOT)
        made = arena_cmd("new", "--lang", "cpp", "kitcpp", cwd=work)
        if made.returncode != 0:
            raise SystemExit(f"arena new --lang cpp: {made.stderr}")
        found: dict[str, object] = {}
        found["files 2-6"] = tournament(
            work, "files", "counter.py", "tablesize.py", "burner.py", "greedy", "random", "heuristic",
            "--players", "2-6", "--games", "2", "--max-tables", "2",
        )  # fmt: skip
        found["programs 2-6"] = tournament(
            work, "programs", "plain.js", "shed.js", "kitcpp", "counter.py", "greedy", "random",
            "--players", "2-6", "--games", "1", "--max-tables", "2",
        )  # fmt: skip
        found["teams"] = tournament(
            work, "teams", "--variant", "teams", "--team", "A=greedy,random", "--team", "B=counter.py,shed.js",
            "--team", "C=plain.js,heuristic", "--players", "4,6", "--games", "1",
        )  # fmt: skip
        found["play"] = play(work, "play", "counter.py", "greedy", "shed.js", "random", "--games", "6")
        found["play -j2"] = play(work, "playj", "counter.py", "kitcpp", "plain.js", "--games", "6", "-j", "2")
        found["play sprt"] = play(work, "sprt", "counter.py", "greedy", "--sprt", "0,50", "--games", "12")
        found["check py"] = check(work, "check-py", "counter.py")
        found["check cpp"] = check(work, "check-cpp", "kitcpp")
        out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        print(json.dumps({k: (v.get("games") if isinstance(v, dict) else None) for k, v in found.items()}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
