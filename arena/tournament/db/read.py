"""Reading a tournament database without writing to it: format checks, rows, sources, seed.

``arena standings``, ``arena report`` and ``arena replay --db`` only read; so
does a resume before it decides to write. Nothing here creates a file: see
:func:`open_readonly`. The writer is :mod:`.database`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...trust.text import escape
from ..plan.schedule import MAX_GAMES
from ..results.finished import GameResult
from ..results.teams import Team, check_layout, read_teams
from .guard import check_schema, connect_readonly
from .rows import (
    MAX_META,
    BotRow,
    DamagedDB,
    Tables,
    TournamentDBError,
    bot_sources,
    check_meta,
    damaged,
    fetch,
    has_table,
    read_authors,
    read_bots,
    read_game_data,
    read_settings,
    read_tables,
    text,
)

__all__ = [  # the row types and checked readers of .dbrows, with this module's own
    "BotRow",
    "DamagedDB",
    "GameResult",
    "Stored",
    "Tables",
    "TournamentDBError",
    "has_table",
    "load",
    "open_readonly",
    "read_authors",
    "read_bots",
    "read_games",
    "read_settings",
    "read_sources",
    "read_tables",
    "stored_method",
    "stored_seed",
]

FORMAT = "arena-tournament"
VERSION = 1


def _check_format(conn: sqlite3.Connection, path: Path, *, exact: bool = False) -> dict[str, str] | None:
    """The ``meta`` table of a tournament database; None for an empty one. Its schema is
    checked first (:func:`.guard.check_schema`; ``exact`` for a database a run writes to).

    :raises TournamentDBError: not SQLite, damaged, or another program's database.
    """
    try:
        names = check_schema(conn, exact=exact)
        if not names:
            return None
        if "meta" not in names:
            raise TournamentDBError(
                f"{path}: an SQLite database, but not a tournament database (tables: {', '.join(sorted(names))})"
            )
    except DamagedDB as exc:
        raise TournamentDBError(f"{path}: {exc}") from None
    except sqlite3.DatabaseError as exc:
        raise TournamentDBError(f"{path}: not a tournament database ({escape(exc, 200)})") from None
    try:
        meta = check_meta(fetch(conn, "meta", "SELECT key, value FROM meta", limit=MAX_META))
    except DamagedDB as exc:
        raise TournamentDBError(f"{path}: {exc}") from None
    if meta.get("format") != FORMAT:
        raise TournamentDBError(f"{path}: an SQLite database, but not a tournament database")
    if meta.get("version") != str(VERSION):
        raise TournamentDBError(
            f"{path}: tournament database version {meta.get('version')}; this arena reads version {VERSION}"
        )
    return meta


def open_readonly(path: str | os.PathLike[str]) -> tuple[sqlite3.Connection, dict[str, str]]:
    """Open an existing tournament database for reading (``arena standings``), leaving no file behind.

    The files are checked before SQLite opens them, and the schema before any row is read
    (:mod:`.guard`); how the database is opened so that SQLite creates no ``-wal`` or
    ``-shm`` file (read-only media work) is :func:`.guard.connect_readonly`'s.

    Everything read through the connection is one snapshot: a read transaction begins before
    the first read and lasts until the connection is closed, so a game the writer commits
    meanwhile is either wholly in what is read (its row and its results) or not at all.
    """
    p = Path(path)
    conn = connect_readonly(p)
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
    """Every stored bot source by sha256, each checked to hash to it; empty for a database made
    before sources were stored. :raises TournamentDBError: a source that does not match."""
    if not has_table(conn, "sources"):
        return {}
    rows = fetch(conn, "sources", "SELECT sha256 FROM sources", limit=1_000_000)
    shas = [sha for (sha,) in rows if isinstance(sha, str)]
    return bot_sources(conn, [BotRow(i, sha, sha, None, "file", sha) for i, sha in enumerate(shas)])


def read_games(conn: sqlite3.Connection) -> list[GameResult]:
    """Every finished game in key order (size, table, deal, rotation): the order ratings use;
    checked against the bots and tables. :raises DamagedDB:."""
    bots = read_bots(conn)
    return read_game_data(conn, len(bots), read_tables(conn, len(bots)))


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
    except (ValueError, RecursionError, AttributeError, sqlite3.Error):
        return None
    return seed if type(seed) is int else None


def stored_method(path: str) -> str | None:
    """The sequential method of the adaptive tournament in the database at ``path`` (a
    resume plays on with it); None when there is none."""
    if not os.path.isfile(path):
        return None
    try:
        conn, meta = open_readonly(path)
        conn.close()
        method = json.loads(meta.get("settings", "{}")).get("adaptive", {}).get("method")
    except (TournamentDBError, ValueError, RecursionError, AttributeError, sqlite3.Error):
        return None
    return method if isinstance(method, str) else None


@dataclass(frozen=True)
class Stored:
    """A tournament database's content, every row checked (:func:`load`)."""

    settings: dict[str, Any]
    bots: list[BotRow]
    tables: Tables
    games: list[GameResult]
    authors: dict[str, str]

    @property
    def labels(self) -> list[str]:
        return [b.label for b in self.bots]

    @property
    def teams(self) -> tuple[Team, ...]:
        """The teams of a teams tournament (checked by :func:`load`); () otherwise."""
        return read_teams(self.settings["teams"]) if "teams" in self.settings else ()

    @property
    def total(self) -> int:
        """Games in the whole schedule (an adaptive schedule has no fixed size: those stored)."""
        if "adaptive" in self.settings:
            return len(self.games)
        return sum(size * len(t) * self.settings["games"] for size, t in self.tables.items())


def load(conn: sqlite3.Connection, meta: dict[str, str]) -> Stored:
    """Settings, bots, tables, games and authors, checked against each other.

    :raises DamagedDB:.
    """
    settings = read_settings(meta)
    for key in ("created", "arena_version", "tournament_id"):  # shown in reports
        if key in meta:
            text("meta", key, meta[key], 64)
    bots = read_bots(conn)
    tables = read_tables(conn, len(bots))
    if sorted(tables) != settings["sizes"]:
        raise damaged("tables", f"tables of sizes {sorted(tables)}, but the settings say {settings['sizes']}")
    if "adaptive" in settings:  # the first round alone is every table times first_deals blocks
        size = settings["sizes"][0]
        planned = size * len(tables[size]) * settings["adaptive"]["first_deals"]
    else:
        planned = sum(size * len(t) * settings["games"] for size, t in tables.items())
    if planned > MAX_GAMES:
        raise damaged("tables", f"a schedule of {planned} games; a tournament has at most {MAX_GAMES}")
    games = read_game_data(conn, len(bots), tables, settings)
    if "teams" in settings:  # every bot in one team, tables of whole teams, partners opposite
        check_layout(read_teams(settings["teams"], len(bots)), tables, games)
    return Stored(settings, bots, tables, games, read_authors(meta, [b.label for b in bots]))
