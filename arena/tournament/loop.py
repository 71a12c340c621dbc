"""The tournament loop: a planner says which games to play, a backend plays them, this
process alone stores them (the Axelrod pattern: one schedule makes matches, workers play
them, one writer stores them, one result set answers every question).

A :class:`Planner` is what changes between kinds of tournament. A fixed schedule
(round robin, balanced, gauntlet) is :class:`FixedPlanner`: one round, every game of
the schedule not yet stored. An adaptive run is :class:`~.plan.adaptive.AdaptivePlanner`:
rounds planned from the results so far, until the order is settled. :func:`play`
opens the database, lets the planner resume from it, hands the backend the planner's
keys (and, for a planner of rounds, its next rounds as they are needed), stores each
batch as it comes back and feeds it to the planner, and stops cleanly on Ctrl-C.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .backends.games import GameRecord
from .backends.local import HarnessError
from .db import replays as records_folder
from .db.database import TournamentDB
from .plan.schedule import GameKey, Schedule
from .results.finished import GameResult

if TYPE_CHECKING:
    from .plan.plan import Plan


class SetupError(ValueError):
    """The tournament cannot start as asked (too few bots, impossible table size...)."""


class Planner(Protocol):
    """Which games a tournament plays, decided from the games stored so far."""

    #: Whether more keys may follow as results come in (the backend then asks :meth:`more`).
    rounds: bool

    def index(self, key: GameKey) -> int:
        """The game's database row id, less 1."""

    def resume(self, db: TournamentDB) -> int:
        """Take in what the database holds; returns how many games it holds."""

    def feed(self, games: Sequence[GameResult]) -> None:
        """Games just stored."""

    def advance(self) -> list[GameKey]:
        """The keys to play now ([] when the tournament is over); also called once at the end."""

    def more(self) -> list[GameKey]:
        """The next round's keys, once every key handed out so far is back ([]: none)."""


class FixedPlanner:
    """A fixed schedule as a plan: one round of every game not yet stored, in schedule order."""

    rounds = False

    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule
        self.done: set[GameKey] = set()

    def index(self, key: GameKey) -> int:
        return self.schedule.index(key)

    def resume(self, db: TournamentDB) -> int:
        self.done = db.finished()  # keys alone: a resume of a large tournament reads little
        return len(self.done)

    def feed(self, games: Sequence[GameResult]) -> None:
        self.done.update(g.key for g in games)

    def advance(self) -> list[GameKey]:
        return [k for k in self.schedule.keys() if k not in self.done]

    def more(self) -> list[GameKey]:
        return []


@dataclass
class Played:
    """What one run of the loop did."""

    played: int  # games this run stored
    elapsed: float  # seconds it spent playing
    stopped: bool  # Ctrl-C or SIGTERM stopped it
    signum: int = int(signal.SIGINT)


class StopFlag:
    """Ctrl-C or SIGTERM sets the flag (the run stops after storing what has finished); a second
    one raises ``KeyboardInterrupt`` at once. ``signum`` says which signal stopped the run."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.stopped = False
        self.signum = int(signal.SIGINT)
        self._old: dict[int, Any] = {}

    def __call__(self) -> bool:
        return self.stopped

    def _handle(self, signum: int, frame: Any) -> None:
        if self.stopped:
            raise KeyboardInterrupt
        self.stopped = True
        self.signum = signum
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def __enter__(self) -> StopFlag:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                if signal.getsignal(sig) is not signal.SIG_IGN:  # nohup, background jobs
                    self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()


def write_replay(folder: Path, record: GameRecord) -> None:
    """``FOLDER/<game key>.jsonl``, written whole or not at all."""
    path = folder / f"{record.key}.jsonl"
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in record.log or ()))
    os.replace(tmp, path)


def store_batch(db: TournamentDB, batch: Sequence[GameRecord], schedule: Any, folder: Path | None, db_path: Any) -> int:
    """Write a batch's replays (when kept), then commit its games; returns the games added.

    The records go to disk first, so a stored game always has its record file.
    """
    if folder:
        for record in batch:
            try:
                write_replay(folder, record)
            except OSError as exc:
                raise HarnessError(f"cannot write a replay to {folder}: {exc.strerror or exc}") from None
    try:
        return db.add(batch, schedule)
    except sqlite3.Error as exc:
        raise HarnessError(f"cannot store games in {db_path}: {exc}") from None


def open_tournament(
    p: Plan,
    db_path: str | os.PathLike[str],
    *,
    replays: str | None,
    force: bool,
    settings: dict[str, Any] | None = None,
) -> tuple[TournamentDB, Path | None]:
    """Check the replays folder, open (or make) the database with ``settings`` (default the
    plan's), then claim the folder; the database and the folder (None without ``replays``).

    :raises SetupError:, :raises TournamentDBError:.
    """
    folder = Path(replays) if replays else None
    if folder:
        try:
            records_folder.check(folder, db_path, force=force)
        except records_folder.RecordsFolderError as exc:
            raise SetupError(str(exc)) from None
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)  # the folder itself is made once the database is
        except OSError as exc:
            raise SetupError(f"{folder}: cannot make the replays folder: {exc.strerror or exc}") from None
        # Refused now, not once the database is made: read-only media, a folder not ours to write.
        where = folder if folder.exists() else folder.parent
        if not os.access(where, os.W_OK | os.X_OK):
            why = "read-only file system" if _read_only(where) else "permission denied"
            raise SetupError(f"{folder}: cannot make the replays folder: {why}")
    db = TournamentDB.open(
        db_path,
        p.settings if settings is None else settings,
        [e.row(i) for i, e in enumerate(p.entrants)],
        p.schedule,
        sources={e.src.sha256: e.src.source for e in p.entrants},
        authors=p.authors,
    )
    if folder:
        try:
            records_folder.claim(folder, db.meta(), db_path)
        except OSError as exc:
            db.close()
            raise SetupError(f"{folder}: cannot make the replays folder: {exc.strerror or exc}") from None
    return db, folder


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def play(
    p: Plan,
    db_path: str | os.PathLike[str],
    backend: Callable[..., Any],
    planner: Planner,
    *,
    settings: dict[str, Any] | None = None,
    replays: str | None = None,
    force: bool = False,
    sandbox: dict[str, Any] | None = None,
    on_start: Callable[[], None] | None = None,
    on_played: Callable[[int], None] | None = None,
) -> Played:
    """Play what ``planner`` hands out into the database at ``db_path`` (made with ``settings``,
    default the plan's), storing and feeding back each batch as it comes.

    :raises TournamentDBError:, :raises SetupError:, :raises HarnessError:.
    """
    db, folder = open_tournament(p, db_path, replays=replays, force=force, settings=settings)
    try:
        if sandbox is not None:  # the hardening layers this run's bot files play under
            db.note("sandbox", sandbox)
        planner.resume(db)
        if on_start:
            on_start()
        keys = planner.advance()
        played = 0
        started = time.perf_counter()
        with StopFlag() as stop:
            if keys:
                more = planner.more if planner.rounds else None
                batches = backend(p.job(keep_logs=folder is not None), keys, stop, more)
                try:
                    for batch in batches:
                        played += store_batch(db, batch, planner, folder, db_path)
                        planner.feed([r.result() for r in batch])
                        if on_played is not None:
                            on_played(len(batch))
                except KeyboardInterrupt:
                    stop.stopped = True
                finally:
                    batches.close()  # stops the workers
            if not stop.stopped:
                planner.advance()  # the plan's last word (an adaptive run's status)
        return Played(played, time.perf_counter() - started, stop.stopped, stop.signum)
    finally:
        db.close()
