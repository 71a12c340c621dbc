"""Tournament throughput: games per second with 1 and 2 local workers, and the ratio.

    python benchmarks/tournament.py [--deals 80] [--repeat 3]

Each run is a whole ``arena tournament`` minus the standings: a fresh
database, worker start-up, every game stored as it ends. Runs alternate
between worker counts and the best of ``--repeat`` is reported, because
other processes on a shared machine slow single runs down. As a ceiling,
the script also times the same games split by hand between two independent
processes (no database, no coordination).

``--files`` runs what a contest runs: ``arena tournament`` (a subprocess, as a
user starts it, ``--workers 2``) of ``--bots`` (default 8) copies of ``bots/heuristic.py`` given
as files, sandboxed and ``--trusted`` in turn, at each table size of
``--players`` (default 2-6) with ``--games`` deals a table (default 10, so
each stream is ten games, as in a final at ``--games 10``). Per size it
prints games/s by wall and by CPU (the whole process tree's, by ``wait4``),
the sandboxed/trusted ratios, and the 30-bot final's estimate: each size's
games of ``Schedule.build(30, 2-6, deals=10)`` at that size's sandboxed rate,
by CPU on this machine's cores (every core busy) and by the measured wall.

    python benchmarks/tournament.py --files [--bots 8] [--games 10] [--players 2-6] [--repeat 1]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.game.rules import CONTEST
from arena.tournament.backends.games import GameRunner, Job
from arena.tournament.plan.schedule import Schedule, parse_sizes
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


def tournament_cli(
    files: list[str], size: int, games: int, trusted: bool, workers: int = 2
) -> tuple[int, float, float]:
    """(games, wall seconds, CPU seconds of the whole process tree) of one ``arena tournament``."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "arena", "tournament", *files, "--players", str(size), "--games", str(games)]
        argv += ["--seed", "1", "--workers", str(workers), "--db", str(Path(tmp) / "t.sqlite"), "-q"]
        argv += ["--trusted"] if trusted else []
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"arena tournament failed: {proc.stderr.read().decode() if proc.stderr else ''}")
        played = Schedule.build(len(files), [size], deals=games, seed=1).total_games
    return played, wall, usage.ru_utime + usage.ru_stime


def template_startup(path: str, repeat: int = 3) -> float:
    """CPU seconds (the referee's and the template's) of starting one bot's template, loading the
    bot once in a trial game process and stopping it: what each tournament worker pays once per
    bot and run, whatever the number of games (the least of ``repeat`` tries)."""
    from arena.sandbox import Limits, SandboxFactory
    from arena.trust.botsource import read_bot_file

    src = read_bot_file(path)

    def used() -> float:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    best = float("inf")
    for _ in range(repeat):
        before = used()
        SandboxFactory(src, Limits()).close()
        best = min(best, used() - before)
    return best


def files_mode(bots: int, games: int, sizes: tuple[int, ...], repeat: int) -> None:
    """Sandboxed heuristic files against ``--trusted``, per table size, and the 30-bot estimate.

    The estimate is given twice: at each size's rate as measured (the run's start-up included),
    and with the templates' start-up taken off the sandboxed CPU (each of the two workers starts
    each bot's template once a run: ``bots x 2`` starts here, a fixed cost that a 30-bot final
    pays once, 60 starts for its 339,300 games, and that a short benchmark run spreads over few
    games)."""
    cores = len(os.sched_getaffinity(0))
    final = Schedule.build(30, [2, 3, 4, 5, 6], deals=10, seed=0)
    final_games = {s.size: len(s.tables) * 10 * s.size for s in final.sizes}
    print(
        f"load average {os.getloadavg()[0]:.1f}, {cores} cores; {bots} heuristic.py files, --games {games}, 2 workers"
    )
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i in range(bots):
            files.append(str(Path(tmp) / f"h{i}.py"))
            shutil.copy(Path(__file__).parent.parent / "bots" / "heuristic.py", files[-1])
        startup = template_startup(files[0])
        fixed = bots * 2 * startup
        print(f"  a template's start-up: {startup * 1e3:.0f} ms of CPU; {bots} bots x 2 workers: {fixed:.2f} s a run")
        hours = {"cpu": 0.0, "wall": 0.0, "net": 0.0}
        for size in sizes:
            best: dict[bool, tuple[float, float, float]] = {}
            for _ in range(repeat):
                for trusted in (False, True):  # interleaved
                    n, wall, cpu = tournament_cli(files, size, games, trusted)
                    wall_rate, cpu_rate = n / wall, n / cpu
                    net_rate = cpu_rate if trusted else n / max(cpu - fixed, 1e-9)
                    old = best.get(trusted, (0.0, 0.0, 0.0))
                    best[trusted] = (max(old[0], wall_rate), max(old[1], cpu_rate), max(old[2], net_rate))
            (sw, sc, sn), (tw, tc, _) = best[False], best[True]
            print(
                f"  {size} players: sandboxed {sw:6.1f} games/s wall, {sc:6.1f} per CPU second ({sn:.1f} without the "
                f"templates' start-up); trusted {tw:6.1f} wall, {tc:6.1f} per CPU second; ratio {sw / tw:.3f} by "
                f"wall, {sc / tc:.3f} by CPU ({sn / tc:.3f})",
                flush=True,
            )
            if size in final_games:
                hours["cpu"] += final_games[size] / (sc * min(cores, 2)) / 3600
                hours["net"] += final_games[size] / (sn * min(cores, 2)) / 3600
                hours["wall"] += final_games[size] / sw / 3600
    if set(final_games) <= set(sizes):
        final_fixed = 30 * 2 * startup / min(cores, 2) / 3600
        print(
            f"30-bot final at 2-6 players, --games 10 ({final.total_games:,} games), sandboxed: "
            f"{hours['cpu']:.2f} h on two free cores (by CPU), {hours['net'] + final_fixed:.2f} h with the final's own "
            f"template start-ups (60) in place of this run's, {hours['wall']:.2f} h at this run's wall rates"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=80, help="deals per table (default 80: 4800 games)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per worker count; the best counts")
    parser.add_argument("--files", action="store_true", help="sandboxed heuristic files against --trusted")
    parser.add_argument("--games", type=int, default=10, help="with --files: deals per table (default 10)")
    parser.add_argument("--bots", type=int, default=8, help="with --files: bot files (default 8)")
    parser.add_argument("--players", default="2-6", help="with --files: table sizes (default 2-6)")
    args = parser.parse_args()
    if args.files:
        files_mode(args.bots, args.games, parse_sizes(args.players), args.repeat if args.repeat != 3 else 1)
        return 0
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
