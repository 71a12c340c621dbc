"""The server's background processes: the check queue, the build queue, the ladder and the tables,
one process each (two for builds), and a final.

``python -m arena.server.workers.processes check|build|ladder|tables DIR [--check-games N]`` is what
:class:`~arena.server.workers.supervisor.Supervisor` starts; ``... final DIR --round N`` what the
desk starts to run a final (:mod:`..contest.publish`). A worker works until SIGTERM, or until
its parent (the server) is gone, so a ``kill -9`` of the server leaves no worker writing on.
Each unit of work ends in one transaction (:mod:`arena.server.store.database`), so killing a worker at any
instant loses no finished check or game: a claimed check is put back in the queue by
whoever notices the worker's death (the supervisor, or the next ``arena serve``).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..ladder.pace import Pace

#: Seconds a worker with nothing to do waits before it looks again.
IDLE_SECONDS = 0.3
#: How much lower a worker's CPU priority is than the server's (os.nice).
NICE = 10


class Stop(Exception):
    """SIGTERM, or the parent is gone: stop after cleaning up."""


def _stop(signum: int, frame: object) -> None:
    raise Stop


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="arena.server.workers.processes")
    parser.add_argument("kind", choices=("check", "build", "ladder", "final", "tables"))
    parser.add_argument("folder")
    parser.add_argument("--check-games", type=int, default=2)
    parser.add_argument("--parent", type=int, default=0)
    parser.add_argument("--backend", choices=("local", "ray"), default="local")
    parser.add_argument("--workers", type=int, default=1, help="with --backend ray: blocks (games) in flight")
    parser.add_argument("--ray-address", default=None, help="with --backend ray: the cluster to join")
    parser.add_argument("--round", type=int, default=1, help="final: the round whose final is run")
    parser.add_argument("--pace", type=float, default=0.0, help="games per bot an hour at most (0: no pace)")
    parser.add_argument("--share", type=float, default=1.0, help="this worker's share of the pace")
    parser.add_argument("--cpu", type=float, default=1.0, help="the share of the time the worker may be busy")
    parser.add_argument("--keep-games", type=int, default=0, help="each version's latest games kept whole")
    parser.add_argument("--disk-budget", type=int, default=0, help="bytes the contest folder may hold (0: none)")
    opts = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the server, which stops us
    signal.signal(signal.SIGTERM, _stop)
    try:  # from here on SIGTERM is a Stop, wherever it lands (it landed in os.nice: a traceback)
        try:  # background work yields the CPU to the site's answers (docs/server.md, "Load")
            os.nice(NICE)
        except OSError:
            pass
        parent = opts.parent or os.getppid()
        if opts.kind == "final":
            return run_final(opts.folder, opts.round, opts.backend, opts.workers, opts.ray_address)
        from ..ladder.pace import Pace

        pace = Pace(opts.pace, opts.cpu, opts.share)
        return work(
            opts.kind,
            opts.folder,
            parent,
            opts.check_games,
            opts.backend,
            opts.workers,
            opts.ray_address,
            (pace, opts.keep_games, opts.disk_budget),
        )
    except Stop:  # asked to stop (even while starting up): nothing half-written, nothing to say
        return 0


def work(
    kind: str,
    folder: str,
    parent: int,
    check_games: int,
    backend: str = "local",
    workers: int = 1,
    ray_address: str | None = None,
    gate: tuple[Pace, int, int] | None = None,
) -> int:
    """Open the contest and work as ``kind`` until the server is gone; the ladder with its gate
    (:class:`..ladder.pace.Gate`: pause, the pace, each version's latest games kept whole, the
    disk budget in bytes, 0: none). Only the build workers build: the others take their programs'
    builds from the build queue's cache."""
    from ..store import database as store

    try:
        db = store.open_db(folder)
    except store.ContestError as exc:
        sys.stderr.write(f"arena worker: {exc}\n")
        return 2
    from ...sandbox.programs.buildcache import forbid_builds

    try:
        if kind == "build":
            run_builds(db, parent)
        else:  # their programs' builds come from the build queue's cache, never made here
            with forbid_builds("a contest's builds run in its build queue"):
                if kind == "check":
                    run_checks(db, parent, check_games)
                elif kind == "tables":
                    run_tables(folder, parent)
                else:
                    run_ladder(db, parent, backend, workers, ray_address, ladder_gate(db, folder, gate))
    finally:
        db.close()
    return 0


def run_final(folder: str, number: int, backend: str, workers: int, ray_address: str | None) -> int:
    """The desk's final: round ``number``'s, with the settings the desk stored when it began it (a
    final begun and not published resumes). SIGTERM (the server stopping) stops it resumable."""
    from pathlib import Path

    from ..contest import final, publish
    from ..store import database as store

    try:
        db = store.open_db(folder)
    except store.ContestError as exc:
        sys.stderr.write(f"arena worker: {exc}\n")
        return 2
    try:
        data = final.state(db, number)
        settings = final.settings_of(data)
        if data.get("state") != "running" or settings is None:
            return 0  # not begun by the desk (or taken over): nothing to do
        final.update_state(db, number, pid=os.getpid())
        backend_options = publish.tournament_backend(backend, workers, ray_address)
        return 0 if publish.run(db, Path(folder), number, settings, backend_options) else 1
    finally:
        db.close()


def ladder_gate(db: sqlite3.Connection, folder: str, gate: tuple[Pace, int, int] | None) -> object:
    """The ladder's gate from its pace, games kept whole (0: the default) and disk budget (0: none)."""
    if gate is None:
        return None
    from ..ladder.pace import Gate, Pacer
    from ..ladder.retention import KEEP_GAMES, Retention

    pace, keep, budget = gate
    return Gate(db, Pacer(pace), Retention(db, folder, keep or KEEP_GAMES, budget or None))


def alive(parent: int) -> bool:
    return os.getppid() == parent


def run_checks(db: object, parent: int, games: int) -> None:
    from ...authoring.check import CheckSettings
    from ..contest.checks import prepare_missing_view, run_queue

    settings = CheckSettings(games=games, seed=random.SystemRandom().randrange(2**63))
    while alive(parent):  # checks first; when none waits, the desk's views an older arena did not make
        if not run_queue(db, settings, os.getpid()) and not prepare_missing_view(db):  # type: ignore[arg-type]
            time.sleep(IDLE_SECONDS)


def run_builds(db: object, parent: int) -> None:
    """Bot programs' builds, one at a time (:mod:`..contest.building`), off every other loop."""
    from ..contest.building import run_queue
    from ..store.builds import decide_missing

    while alive(parent):
        if not run_queue(db, os.getpid()) and not decide_missing(db):  # type: ignore[arg-type]
            time.sleep(IDLE_SECONDS)


def run_tables(folder: str, parent: int) -> None:
    """The tables' games (:mod:`arena.server.tables.worker`), talking with the server over stdin and
    stdout; whatever else writes to stdout (a library's print) goes to stderr, never into that pipe."""
    from ..tables.worker import serve

    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(folder, sys.stdin.fileno(), out, lambda: alive(parent), IDLE_SECONDS)


def run_ladder(
    db: object,
    parent: int,
    backend: str = "local",
    workers: int = 1,
    ray_address: str | None = None,
    gate: object = None,
) -> None:
    from ..ladder.matchmaker import LadderPlayer

    rng = random.Random(random.SystemRandom().randrange(2**63))
    player = LadderPlayer(db, gate=gate)  # type: ignore[arg-type]
    try:
        if backend == "ray":  # the blocks played as Ray tasks, `workers` at a time
            from ...tournament.backends.local import HarnessError
            from ..ladder.ray_tasks import run

            try:
                run(player, rng, workers, lambda: alive(parent), IDLE_SECONDS, ray_address)
            except HarnessError as exc:
                sys.stderr.write(f"arena worker: {exc}\n")
            return
        while alive(parent):
            if not player.play_block(rng):
                time.sleep(IDLE_SECONDS)
    finally:
        player.close()


if __name__ == "__main__":
    sys.exit(main())
