"""Bot programs' speed (issue 20): the same logic as a Python bot file, a node program
(protocol v1), a 2012-API node bot (through the shim), a C++ program and a Python program over
stdio, each against greedy (in-process), 2 players, one stream (one process) per run.

Per runtime: games/s, the wall time of a move of the bot's seat as the referee sees it (view
out, actions in, checks), the bot process's CPU per move (its CPU clock), and the start cost
of a stream: a fresh process from a clean start to its first answer (the Python file: a game
process forked from its template, loaded; a program: the launcher, its layers, the exec, the
runtime's start and the ``ready``). Called by ``benchmarks/sandbox.py --programs``.

    python benchmarks/programs.py [--games 40] [--starts 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

from arena.game.referee import GameInfo, Referee
from arena.game.rules import CONTEST
from arena.sandbox import Limits
from arena.seats.factories import make_factory
from arena.seats.loader import load_trusted, resolve_bot
from arena.trust.botsource import read_bot_file

ROOT = Path(__file__).resolve().parent.parent

#: examples/shed.js's logic as a Python bot file.
SHED_PY = '''"""shed: puts its most expensive playable card."""


class Bot:
    name = "shed-py"

    def move(self, turn):
        while True:
            options = turn.puttable()
            if options:
                card = max(options, key=lambda c: c.points)
                turn.put(card)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''


def bots(folder: Path) -> dict[str, Path]:
    py = folder / "shed_py.py"
    py.write_text(SHED_PY, encoding="utf-8")
    return {
        "python file": py,
        "node (protocol)": ROOT / "examples" / "shed.js",
        "node (2012 API)": ROOT / "examples" / "contest2012.js",
        "C++ (protocol)": ROOT / "examples" / "kits" / "cpp",
        "python (stdio)": ROOT / "examples" / "kits" / "python-stdio",
    }


class Timed:
    """Wraps a remote seat to time its moves (wall, as the referee waits for them)."""

    def __init__(self, seat: Any, times: list[float]) -> None:
        self.seat, self.times, self.name = seat, times, seat.name

    def sit(self, context: Any) -> None:
        self.seat.sit(context)

    def start_game(self, info: GameInfo) -> None:
        self.seat.start_game(info)

    def play_move(self) -> None:
        t0 = time.perf_counter()
        try:
            self.seat.play_move()
        finally:
            self.times.append(time.perf_counter() - t0)

    def end_round(self, result: Any) -> None:
        self.seat.end_round(result)

    def end_game(self, result: Any) -> None:
        self.seat.end_game(result)

    def close(self) -> None:
        self.seat.close()


def measure(path: Path, games: int, starts: int) -> dict[str, Any]:
    limits = Limits(move_seconds=2.0, game_seconds=60.0, wall_factor=20.0)
    src = read_bot_file(path)
    greedy = load_trusted(resolve_bot("greedy"))
    t0 = time.perf_counter()
    factory = make_factory(src, limits=limits)
    setup = time.perf_counter() - t0
    stream = factory.stream()
    times: list[float] = []
    faults = 0
    referee = Referee(CONTEST)
    t0 = time.perf_counter()
    for g in range(games):
        players = [Timed(stream(g, 0, deal=g), times), greedy(g, 1)]
        try:
            outcome = referee.play(players, seed=1000 + g, bots=[src.label, "greedy"])
        finally:
            for p in players:
                p.close()
        faults += len(outcome.faults)
    wall = time.perf_counter() - t0
    stream.close()
    spawn = []
    for _ in range(starts):
        s = factory.stream()
        seat = s(0, 0)
        t1 = time.perf_counter()
        seat.start_game(GameInfo(0, ("a", "b"), CONTEST, "probe"))
        spawn.append(time.perf_counter() - t1)
        seat.close()
        s.close()
    cpu = list(factory.move_cpu)
    factory.close()
    return {
        "games_per_s": games / wall,
        "move_wall_ms": statistics.median(times) * 1e3,
        "move_cpu_ms": statistics.median(cpu) * 1e3 if cpu else None,
        "stream_start_ms": statistics.median(spawn) * 1e3,
        "setup_s": setup,
        "moves": len(times),
        "faults": faults,
    }


def run(games: int = 40, starts: int = 10) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        return {name: measure(path, games, starts) for name, path in bots(Path(tmp)).items()}


def report(doc: dict[str, Any]) -> None:
    base = doc["python file"]
    rows = [
        [
            name,
            f"{r['games_per_s']:.1f}",
            f"{r['move_wall_ms']:.3f}",
            f"{r['move_wall_ms'] - base['move_wall_ms']:+.3f}",
            "-" if r["move_cpu_ms"] is None else f"{r['move_cpu_ms']:.3f}",
            f"{r['stream_start_ms']:.1f}",
            f"{r['setup_s']:.2f}",
            r["faults"],
        ]
        for name, r in doc.items()
    ]
    headers = [
        "runtime",
        "games/s",
        "move ms (wall)",
        "vs python file",
        "bot CPU ms/move",
        "stream start ms",
        "setup s",
        "faults",
    ]
    print(tabulate(rows, headers=headers))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    doc = run(args.games, args.starts)
    print(json.dumps(doc, indent=2)) if args.json else report(doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
