"""The results database: one SQLite file (WAL) per tournament, one row per finished game.

The parent process is the only writer; every finished game is committed in
its own transaction with the games that arrived with it, so a crash or a
kill loses at most the games in flight. Opening an existing file checks that
it is a tournament database and that the bots (by file hash), the settings
and the schedule are those of the run asking to resume; a foreign file is
never written to.

Tables (see :data:`SCHEMA`): ``meta`` (format, settings), ``bots``,
``tables`` (the schedule), ``games`` (one row per game), ``results`` (one
row per seat of a game) and ``faults`` (one row per fault).
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...game.seeds import guessable
from ...trust.botsource import source_bytes
from ..backends.games import GameRecord
from ..plan.schedule import GameKey, Schedule
from .guard import LATER_TABLES, SCHEMA, GuardedConnection, check_paths, guard
from .read import (
    FORMAT,
    VERSION,
    BotRow,
    GameResult,
    TournamentDBError,
    _check_format,
    has_table,
    open_readonly,
    read_authors,
    read_bots,
    read_games,
    read_sources,
    read_tables,
    stored_seed,
)
from .rows import renamed_settings


def _connect(path: Path) -> sqlite3.Connection:
    conn = guard(sqlite3.connect(str(path), isolation_level=None, timeout=30, factory=GuardedConnection))
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


#: Settings added after the first databases were made, with the value those databases played under.
LEGACY_SETTINGS: dict[str, Any] = {"move_seconds": 1.0, "game_seconds": 30.0}


class TournamentDB:
    """The writer's handle: create or resume, then :meth:`add` finished games."""

    def __init__(self, conn: sqlite3.Connection, path: Path, settings: dict[str, Any], lock_fd: int = -1) -> None:
        self.conn = conn
        self.path = path
        self.settings = settings
        self.lock_fd = lock_fd

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        settings: dict[str, Any],
        bots: Sequence[BotRow],
        schedule: Schedule,
        sources: Mapping[str, str] | None = None,
        authors: dict[str, str] | None = None,
    ) -> TournamentDB:
        """Create the database, or reopen it to resume the same tournament. ``authors`` (bot label
        -> author, from submission manifests) is stored when the database is made.

        :raises TournamentDBError: a foreign or damaged file (left untouched), or a
            database of a tournament with other bots, settings or schedule.
        """
        p = Path(path)
        exists = os.path.lexists(p)
        if not exists and not p.parent.exists():
            raise TournamentDBError(f"{p}: folder {p.parent} does not exist")
        check_paths(p, exists=exists)  # a regular file, and no FIFO (or link...) where SQLite opens its side files
        _check_writable(p)
        try:
            conn = _connect(p)
        except sqlite3.Error as exc:
            raise TournamentDBError(f"{p}: cannot open: {exc}") from None
        lock_fd = -1
        try:
            lock_fd = _lock(p)
            meta = _check_format(conn, p, exact=True)  # nothing runs on its own as games are stored
            if meta is None:
                cls._create(conn, settings, bots, schedule, authors or {})
            else:
                cls._check_same(conn, p, meta, settings, bots, schedule)
            _add_later_tables(conn, sources or {})
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
        except sqlite3.Error as exc:  # read-only media, a full disk...: one line, the file as it was
            conn.close()
            _unlock(lock_fd)
            raise TournamentDBError(f"{p}: cannot write to it: {exc}") from None
        except BaseException:
            conn.close()
            _unlock(lock_fd)
            raise
        return cls(conn, p, settings, lock_fd)

    @staticmethod
    def _create(
        conn: sqlite3.Connection,
        settings: dict[str, Any],
        bots: Sequence[BotRow],
        schedule: Schedule,
        authors: dict[str, str],
    ) -> None:
        from ... import __version__

        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript("BEGIN IMMEDIATE;" + SCHEMA)  # the transaction stays open until COMMIT
        with Transaction(conn, begun=True):
            conn.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [
                    ("format", FORMAT),
                    ("version", str(VERSION)),
                    ("settings", canonical(settings)),
                    ("arena_version", __version__),
                    ("created", _now()),
                    ("tournament_id", secrets.token_hex(16)),
                    ("authors", canonical(authors)),
                ],
            )
            conn.executemany(
                "INSERT INTO bots VALUES (?, ?, ?, ?, ?, ?)",
                [(b.bot, b.label, b.name, b.path, b.origin, b.sha256) for b in bots],
            )
            conn.executemany(
                "INSERT INTO tables VALUES (?, ?, ?)",
                [(s.size, t, json.dumps(list(table))) for s in schedule.sizes for t, table in enumerate(s.tables)],
            )

    @staticmethod
    def _check_same(
        conn: sqlite3.Connection,
        path: Path,
        meta: dict[str, str],
        settings: dict[str, Any],
        bots: Sequence[BotRow],
        schedule: Schedule,
    ) -> None:
        old_bots = read_bots(conn)
        where = f"{path} holds a tournament"
        fix = "use another --db to start a new tournament"
        old_labels = [b.label for b in old_bots]
        new_labels = [b.label for b in bots]
        if old_labels != new_labels:
            missing = [x for x in old_labels if x not in new_labels]
            added = [x for x in new_labels if x not in old_labels]
            if not missing and not added:
                raise TournamentDBError(
                    f"{where} with the same bots in another order "
                    f"({' '.join(old_labels)}); give them in that order, or {fix}"
                )
            parts = ([f"missing {', '.join(missing)}"] if missing else []) + (
                [f"new {', '.join(added)}"] if added else []
            )
            raise TournamentDBError(f"{where} with other bots ({'; '.join(parts)}); {fix}")
        for old, new in zip(old_bots, bots, strict=True):
            if old.sha256 != new.sha256:
                raise TournamentDBError(
                    f"{where} in which bot {new.label} ({new.path or new.name}) had other code "
                    f"(sha256 {old.sha256[:12]}, now {new.sha256[:12]}); restore it or {fix}"
                )
        try:
            old_settings = json.loads(meta.get("settings", "{}"))
        except (ValueError, RecursionError):
            raise TournamentDBError(f"{path}: damaged settings in table meta") from None
        if not isinstance(old_settings, dict):
            raise TournamentDBError(f"{path}: damaged settings in table meta")
        old_settings = renamed_settings(old_settings)  # move_time, game_time of older databases
        for key, value in LEGACY_SETTINGS.items():  # settings older databases did not store
            if key not in old_settings and key in settings:
                old_settings[key] = value
        if canonical(old_settings) != canonical(settings):
            diffs = _differences(old_settings, settings)
            raise TournamentDBError(
                f"{where} with other settings ({'; '.join(diffs)}); use the same options to resume, or {fix}"
            )
        stored = {
            (size, t): table
            for size, tables in read_tables(conn, len(old_bots)).items()
            for t, table in enumerate(tables)
        }
        wanted = {(s.size, t): table for s in schedule.sizes for t, table in enumerate(s.tables)}
        if stored != wanted:
            raise TournamentDBError(f"{where} with another schedule (made by another arena version?); {fix}")

    def note(self, key: str, value: Any) -> None:
        """Store (or replace) an informational ``meta`` entry, such as this run's sandbox layers."""
        with Transaction(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, canonical(value)))

    def meta(self) -> dict[str, str]:
        """The ``meta`` table (format, settings, created, tournament_id...)."""
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def finished(self) -> set[GameKey]:
        """Keys of the games already stored."""
        return {GameKey(*row) for row in self.conn.execute("SELECT size, tbl, deal, rotation FROM games")}

    def add(self, records: Sequence[GameRecord], schedule: Schedule) -> int:
        """Store finished games in one transaction (a game's row id is 1 + its place in the
        schedule); games already stored are skipped. Returns how many were new."""
        conn = self.conn
        with Transaction(conn):
            fresh: dict[int, GameRecord] = {}
            for r in records:
                fresh.setdefault(schedule.index(r.key) + 1, r)
            ids = list(fresh)
            for i in range(0, len(ids), 500):
                part = ids[i : i + 500]
                for (gid,) in conn.execute(f"SELECT id FROM games WHERE id IN ({','.join('?' * len(part))})", part):
                    del fresh[gid]
            if not fresh:
                return 0
            now = _now()
            games, results, faults = [], [], []
            for gid, r in fresh.items():
                k = r.key
                games.append(
                    (
                        gid,
                        str(k),
                        k.size,
                        k.table,
                        k.deal,
                        k.rotation,
                        r.seed,
                        r.rounds,
                        r.moves,
                        sum(r.faults),
                        round(r.duration, 6),
                        now,
                    )
                )
                results += [
                    (gid, s, bot, r.places[s], r.scores[s], int(s in r.losers), r.faults[s], int(s in r.retired))
                    for s, bot in enumerate(r.seating)
                ]
                faults += [(gid, seat, r.seating[seat], rnd, kind, detail) for seat, kind, detail, rnd in r.fault_list]
            conn.executemany("INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", games)
            conn.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)", results)
            conn.executemany("INSERT INTO faults VALUES (?, ?, ?, ?, ?, ?)", faults)
            conn.executemany(
                "INSERT INTO seat_times VALUES (?, ?, ?, ?, ?)",
                [
                    (gid, s, moves, round(total, 6), round(worst, 6))
                    for gid, r in fresh.items()
                    for s, (moves, total, worst) in enumerate(r.seat_times)
                ],
            )
        return len(fresh)

    def close(self) -> None:
        self.conn.close()
        _unlock(self.lock_fd)  # after SQLite: closing a descriptor drops the process's POSIX locks
        self.lock_fd = -1


def _add_later_tables(conn: sqlite3.Connection, sources: Mapping[str, str]) -> None:
    """Make the :data:`LATER_TABLES` a database lacks and store the bots' sources."""
    with Transaction(conn):
        for table in LATER_TABLES:
            conn.execute(f"CREATE TABLE IF NOT EXISTS {table}")
        conn.executemany(
            "INSERT OR IGNORE INTO sources VALUES (?, ?)",
            [(sha, source_bytes(text)) for sha, text in sorted(sources.items())],
        )


def _check_writable(p: Path) -> None:
    """Refuse, saying why, a database this run could not write: the file and its folder (where
    SQLite keeps the ``-wal`` and ``-shm`` files) must be writable, before SQLite opens it."""
    folder = p.parent
    for where in ([p] if p.exists() else []) + [folder]:
        if not os.access(where, os.W_OK):
            try:
                read_only = bool(os.statvfs(where).f_flag & os.ST_RDONLY)
            except OSError:
                read_only = False
            why = "read-only file system" if read_only else f"{where} is not writable"
            raise TournamentDBError(
                f"{p}: cannot write to it ({why}); a tournament stores each game as it ends: copy the "
                "database to a writable folder to play on (`arena standings` reads it where it is)"
            )


def _lock(path: Path) -> int:
    """Hold an exclusive ``flock`` on the database file while a run writes to it, so two
    runs cannot play the same tournament at once (the kernel drops it when we die).

    :raises TournamentDBError: another run holds it.
    """
    try:
        import fcntl
    except ImportError:  # not POSIX: no guard
        return -1
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise TournamentDBError(
            f"{path}: another arena tournament is writing to it; wait for it to finish or stop it"
        ) from None
    return fd


def _unlock(fd: int) -> None:
    if fd >= 0:
        os.close(fd)


class Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception."""

    def __init__(self, conn: sqlite3.Connection, begun: bool = False) -> None:
        self.conn = conn
        self.begun = begun

    def __enter__(self) -> sqlite3.Connection:
        if not self.begun:
            self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


def canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """``["seed was 1, now 2", "rules.limit was 125, now 101"]``."""
    out = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, f"{prefix}{k}.")
        elif f"{prefix}{k}" == "seed" and not guessable(a):
            out.append(f"seed was a secret one, now {_short(b)}")  # the organiser's: the db holds it
        else:
            out.append(f"{prefix}{k} was {_short(a)}, now {_short(b)}")
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# The reading side (.dbread) is re-exported: callers take the whole database API from here.
__all__ = [
    "TournamentDB",
    "Transaction",
    "SCHEMA",
    "LEGACY_SETTINGS",
    "BotRow",
    "GameResult",
    "TournamentDBError",
    "has_table",
    "open_readonly",
    "read_authors",
    "read_bots",
    "read_games",
    "read_sources",
    "read_tables",
    "stored_seed",
]
