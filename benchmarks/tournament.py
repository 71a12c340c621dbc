"""Tournament throughput: games per second with 1 and 2 local workers, and the ratio.

    python benchmarks/tournament.py [--deals 80] [--repeat 3]

Each run is a whole ``arena tournament`` minus the standings: a fresh
database, worker start-up, every game stored as it ends. Runs alternate
between worker counts and the best of ``--repeat`` is reported, because
other processes on a shared machine slow single runs down. As a ceiling,
the script also times the same games split by hand between two independent
processes (no database, no coordination).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

from arena.rules import CONTEST
from arena.tournament.gamerunner import GameRunner, Job
from arena.tournament.runner import Plan, local_backend, plan, run

BOTS = ["greedy", "random", "greedy", "random", "random", "greedy"]


def one_run(p: Plan, workers: int) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        result = run(p, Path(tmp) / "bench.sqlite", local_backend(workers))
        elapsed = time.perf_counter() - started
    assert result.done == result.total
    return result.played, elapsed


def _play_share(job: Job, keys: list, queue: multiprocessing.Queue[float]) -> None:
    runner = GameRunner(job)
    started = time.perf_counter()
    for key in keys:
        runner.play(key)
    queue.put(time.perf_counter() - started)


def ceiling(p: Plan) -> float:
    """Speed-up of two independent processes over one on the same games (playing only)."""
    ctx = multiprocessing.get_context("spawn")
    keys = list(p.schedule.keys())
    job = p.job()
    times = {}
    for parts in (1, 2):
        queue = ctx.Queue()
        procs = [ctx.Process(target=_play_share, args=(job, keys[i::parts], queue)) for i in range(parts)]
        for proc in procs:
            proc.start()
        times[parts] = max(queue.get() for _ in procs)
        for proc in procs:
            proc.join()
    return times[1] / times[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=80, help="deals per table (default 80: 4800 games)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per worker count; the best counts")
    args = parser.parse_args()
    p = plan(BOTS, sizes=[4], deals=args.deals, seed=1, rules=CONTEST)
    games = p.schedule.total_games
    print(
        f"{len(BOTS)} reference bots, tables of 4, {games} games a run, {os.cpu_count()} cores, best of {args.repeat}"
    )
    best: dict[int, float] = {1: 0.0, 2: 0.0}
    for _ in range(args.repeat):
        for workers in (1, 2):
            played, elapsed = one_run(p, workers)
            rate = played / elapsed
            best[workers] = max(best[workers], rate)
            print(
                f"  {workers} worker{'s' if workers > 1 else ' '}: {played} games in {elapsed:6.2f} s = "
                f"{rate:7.1f} games/s",
                flush=True,
            )
    ratio = best[2] / best[1]
    print(f"best: 1 worker {best[1]:.1f} games/s, 2 workers {best[2]:.1f} games/s, ratio {ratio:.2f}")
    print(f"ceiling: two independent processes play the same games {ceiling(p):.2f}x as fast as one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
