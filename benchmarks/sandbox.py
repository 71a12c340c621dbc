"""Sandbox speed: the same bots (random vs greedy) in-process and sandboxed, games per second.

Both modes play the same games (same seeds, seats rotating), in short slices
that alternate so that other load on the machine hits both alike; the best
slice rate of each mode is kept. Each sandboxed bot has one template process
for the whole run, and each game a fresh game process forked from it, as in
``arena play``. Also measured:
sandboxed games in several threads at once (the referee waits on pipes with
the GIL released, so games overlap with the workers' thinking), and the cost
of starting one hardened worker.

    python benchmarks/sandbox.py [--seconds 2] [--rounds 5] [--threads 2]

Prints the ratio sandboxed / in-process (the target is at least 1/3).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from tabulate import tabulate

from arena.loader import load_trusted, resolve_bot
from arena.referee import Referee
from arena.sandbox import Limits, SandboxFactory

NAMES = ("random", "greedy")


def runner(factories: dict[str, Any]) -> Callable[[int], int]:
    """Plays game ``g`` (seats rotating); returns its number of moves."""
    referee = Referee()

    def run(g: int) -> int:
        names = NAMES if g % 2 else NAMES[::-1]
        players = [factories[n](g, s) for s, n in enumerate(names)]
        try:
            outcome = referee.play(players, seed=g)
        finally:
            for p in players:
                p.close()
        assert not outcome.faults, outcome.faults
        return outcome.moves

    return run


def slice_rate(run: Callable[[int], int], seconds: float, start: int) -> tuple[float, float, int]:
    """(games/s, moves/s, games played) over about ``seconds``."""
    games = moves = 0
    t0 = time.perf_counter()
    while True:
        moves += run(start + games)
        games += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return games / elapsed, moves / elapsed, games


def threaded_rate(run: Callable[[int], int], seconds: float, threads: int, start: int) -> tuple[float, float, int]:
    """Like :func:`slice_rate` with ``threads`` game streams at once."""
    counts = [[0, 0] for _ in range(threads)]
    stop = time.perf_counter() + seconds

    def stream(k: int) -> None:
        g = start + k * 100000
        while time.perf_counter() < stop:
            counts[k][1] += run(g)
            counts[k][0] += 1
            g += 1

    t0 = time.perf_counter()
    pool = [threading.Thread(target=stream, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - t0
    games = sum(c[0] for c in counts)
    return games / elapsed, sum(c[1] for c in counts) / elapsed, games


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one measuring slice")
    parser.add_argument("--rounds", type=int, default=5, help="slices per mode, alternating")
    parser.add_argument("--threads", type=int, default=2, help="game streams in the threaded sandboxed run")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    probe = SandboxFactory(resolve_bot("greedy"), Limits())
    startup = time.perf_counter() - t0
    layers = probe.report.get("layers", {}) if isinstance(getattr(probe, "report", None), dict) else {}
    if not layers and getattr(probe, "idle", None):  # the older design: one worker per match
        layers = probe.idle[0].report["layers"]
    probe.close()

    trusted = {n: load_trusted(resolve_bot(n)) for n in NAMES}
    sandboxed = {n: SandboxFactory(resolve_bot(n), Limits()) for n in NAMES}
    modes = {"in-process": runner(trusted), "sandboxed": runner(sandboxed)}
    best: dict[str, tuple[float, float, int]] = {m: (0.0, 0.0, 0) for m in modes}
    total = {m: 0 for m in modes}
    g = 0
    try:
        for m in modes:  # warm up: workers started, caches filled
            modes[m](g)
        for _ in range(args.rounds):
            for m, run in modes.items():
                rate = slice_rate(run, args.seconds, g)
                g += rate[2]
                total[m] += rate[2]
                if rate[0] > best[m][0]:
                    best[m] = rate
        threaded = (0.0, 0.0, 0)
        if args.threads > 1:
            for _ in range(max(1, args.rounds // 2)):
                rate = threaded_rate(modes["sandboxed"], args.seconds, args.threads, g)
                g += rate[2]
                threaded = max(threaded, rate)
    finally:
        for f in sandboxed.values():
            f.close()

    ratio = best["sandboxed"][0] / best["in-process"][0]
    ratio_threaded = threaded[0] / best["in-process"][0] if threaded[0] else None
    doc = {
        "in_process_games_per_s": round(best["in-process"][0], 1),
        "in_process_moves_per_s": round(best["in-process"][1]),
        "sandboxed_games_per_s": round(best["sandboxed"][0], 1),
        "sandboxed_moves_per_s": round(best["sandboxed"][1]),
        "ratio": round(ratio, 3),
        "threads": args.threads,
        "sandboxed_threaded_games_per_s": round(threaded[0], 1),
        "ratio_threaded": round(ratio_threaded, 3) if ratio_threaded else None,
        "worker_start_seconds": round(startup, 3),
        "games": total,
        "layers_active": [k for k, v in layers.items() if v == "active"],
    }
    if args.json:
        print(json.dumps(doc))
        return 0
    rows = [
        ["in-process (trusted)", doc["in_process_games_per_s"], doc["in_process_moves_per_s"], 1.0],
        ["sandboxed, one game at a time", doc["sandboxed_games_per_s"], doc["sandboxed_moves_per_s"], doc["ratio"]],
    ]
    if threaded[0]:
        rows.append(
            [
                f"sandboxed, {args.threads} games at a time",
                doc["sandboxed_threaded_games_per_s"],
                round(threaded[1]),
                doc["ratio_threaded"],
            ]
        )
    print(tabulate(rows, headers=["random vs greedy", "games/s", "moves/s", "ratio"]))
    print(f"\nsandboxed / in-process = {ratio:.3f} (target >= 0.333: {'met' if ratio >= 1 / 3 else 'NOT met'})")
    if ratio_threaded:
        print(
            f"with {args.threads} games at a time: {ratio_threaded:.3f} "
            f"({'met' if ratio_threaded >= 1 / 3 else 'NOT met'})"
        )
    print(
        f"starting one hardened worker (and loading the bot): {startup * 1000:.0f} ms; "
        f"layers active: {', '.join(doc['layers_active']) or 'none'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
