"""Reading a tournament database without writing to it: format checks, rows, sources, seed.

``arena standings``, ``arena report`` and ``arena replay --db`` only read; so
does a resume before it decides to write. Nothing here creates a file: see
:func:`open_readonly`. The writer is :mod:`.db`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..loader import source_bytes
from .schedule import GameKey

FORMAT = "arena-tournament"
VERSION = 1


class TournamentDBError(Exception):
    """The database cannot be used: not one, foreign, damaged, or for another tournament."""


@dataclass(frozen=True)
class BotRow:
    bot: int
    label: str
    name: str
    path: str | None
    origin: str
    sha256: str


@dataclass(frozen=True)
class GameRow:
    """A finished game as standings read it: per seat (bot, place, score, loser, faults, retired)."""

    key: GameKey
    seats: tuple[tuple[int, int, int, bool, int, bool], ...]


def _check_format(conn: sqlite3.Connection, path: Path) -> dict[str, str] | None:
    """The ``meta`` table of a tournament database; None for an empty one.

    :raises TournamentDBError: not SQLite, damaged, or another program's database.
    """
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not names:
            return None
        if "meta" not in names:
            raise TournamentDBError(
                f"{path}: an SQLite database, but not a tournament database (tables: {', '.join(sorted(names))})"
            )
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise TournamentDBError(f"{path}: not a tournament database ({exc})") from None
    if meta.get("format") != FORMAT:
        raise TournamentDBError(f"{path}: an SQLite database, but not a tournament database")
    if meta.get("version") != str(VERSION):
        raise TournamentDBError(
            f"{path}: tournament database version {meta.get('version')}; this arena reads version {VERSION}"
        )
    return meta


def _sniff(path: Path) -> None:
    """Refuse a file that is not SQLite before SQLite opens it (and maybe writes a journal)."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except IsADirectoryError:
        raise TournamentDBError(f"{path}: is a folder, not a database file") from None
    except OSError as exc:
        raise TournamentDBError(f"{path}: cannot read: {exc.strerror}") from None
    if head and head != b"SQLite format 3\x00":
        raise TournamentDBError(f"{path}: not an SQLite database")


def open_readonly(path: str | os.PathLike[str]) -> tuple[sqlite3.Connection, dict[str, str]]:
    """Open an existing tournament database for reading (``arena standings``), leaving no file behind.

    A database with no ``-wal`` or ``-journal`` file beside it holds everything in its one
    file: it is opened ``immutable``, so SQLite creates no ``-wal``/``-shm`` file and needs no
    write access (read-only media work). With a ``-wal`` file (a run is writing, or was killed),
    games may still be only in it: it is read through SQLite's read-only mode, which uses the
    ``-wal`` and ``-shm`` files already there.
    """
    p = Path(path)
    if not p.exists():
        raise TournamentDBError(f"{p}: no such file")
    _sniff(p)
    live = any(Path(f"{p}{suffix}").exists() for suffix in ("-wal", "-journal"))
    uri = p.resolve().as_uri() + ("?mode=ro" if live else "?immutable=1")
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        raise TournamentDBError(f"{p}: cannot open: {exc}") from None
    if live and not Path(f"{p}-shm").exists():
        try:
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        except sqlite3.OperationalError:
            conn.close()
            raise TournamentDBError(
                f"{p}: its {p.name}-wal file (games of a run still writing, or killed) "
                f"cannot be read without a {p.name}-shm file on read-only media; copy both "
                "files to a writable folder and read them there"
            ) from None
    try:
        meta = _check_format(conn, p)
    except BaseException:
        conn.close()
        raise
    if meta is None:
        conn.close()
        raise TournamentDBError(f"{p}: an empty database, not a tournament")
    return conn, meta


def read_sources(conn: sqlite3.Connection) -> dict[str, str]:
    """Bot sources by sha256 (as the loader holds them: undecodable bytes as surrogate
    escapes); empty for a database made before sources were stored."""
    if not has_table(conn, "sources"):
        return {}
    out = {}
    for sha, data in conn.execute("SELECT sha256, source FROM sources"):
        data = data.encode() if isinstance(data, str) else bytes(data)
        for errors in ("surrogateescape", "surrogatepass"):
            text = data.decode("utf-8", errors)
            if source_bytes(text) == data:
                out[sha] = text
                break
    return out


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def read_authors(meta: dict[str, str]) -> dict[str, str]:
    """Bot label -> author (from submission manifests); {} for databases made without any."""
    try:
        data = json.loads(meta.get("authors", "{}"))
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def read_bots(conn: sqlite3.Connection) -> list[BotRow]:
    return [
        BotRow(*row) for row in conn.execute("SELECT bot, label, name, path, origin, sha256 FROM bots ORDER BY bot")
    ]


def read_games(conn: sqlite3.Connection) -> list[GameRow]:
    """Every finished game in key order (size, table, deal, rotation): the order ratings use."""
    games: dict[int, GameKey] = {}
    for gid, size, tbl, deal, rot in conn.execute("SELECT id, size, tbl, deal, rotation FROM games"):
        games[gid] = GameKey(size, tbl, deal, rot)
    seats: dict[int, list[tuple[int, int, int, bool, int, bool]]] = {gid: [] for gid in games}
    for gid, bot, place, score, loser, faults, retired in conn.execute(
        "SELECT game_id, bot, place, score, loser, faults, retired FROM results ORDER BY game_id, seat"
    ):
        seats[gid].append((bot, place, score, bool(loser), faults, bool(retired)))
    return sorted((GameRow(key, tuple(seats[gid])) for gid, key in games.items()), key=lambda g: g.key)


def stored_seed(path: str | os.PathLike[str]) -> int | None:
    """The seed in the settings of the tournament database at ``path`` (a resume without
    ``--seed`` plays on with it); None when there is no such database or seed."""
    p = Path(path)
    if not p.is_file():
        return None
    try:
        conn, meta = open_readonly(p)
    except TournamentDBError:
        return None
    try:
        conn.close()
        seed = json.loads(meta.get("settings", "{}")).get("seed")
    except (ValueError, AttributeError, sqlite3.Error):
        return None
    return seed if type(seed) is int else None


def scheduled_games(conn: sqlite3.Connection, deals: int) -> int:
    """Games in the whole schedule: tables x size x deals (each deal once per seat rotation)."""
    return sum(size * count * deals for size, count in conn.execute("SELECT size, COUNT(*) FROM tables GROUP BY size"))


def stored_method(path: str) -> str | None:
    """The sequential method of the adaptive tournament in the database at ``path`` (a
    resume plays on with it); None when there is none."""
    from .db import TournamentDBError, open_readonly

    if not os.path.isfile(path):
        return None
    try:
        conn, meta = open_readonly(path)
        conn.close()
        method = json.loads(meta.get("settings", "{}")).get("adaptive", {}).get("method")
    except (TournamentDBError, ValueError, AttributeError, sqlite3.Error):
        return None
    return method if isinstance(method, str) else None


def read_tables(conn: sqlite3.Connection) -> list[tuple[int, ...]]:
    """The stored tables (bot indices), in schedule order."""
    return [tuple(json.loads(b)) for (b,) in conn.execute("SELECT bots FROM tables ORDER BY size, tbl")]
