"""Where the games of the tables people play (:mod:`arena.server.tables.hub`) are kept: a table of their own in
the contest database, ``table_games``, made on first use.

These games never feed the ladder: the ladder's ratings are read and written only with the
``games`` and ``seats`` tables (:func:`.database.record_game`), and a table's game is written
here only, in one transaction under the table's unique key (written once, never twice).
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from . import database as store

SCHEMA = """
CREATE TABLE IF NOT EXISTS table_games (
    key TEXT PRIMARY KEY, seats TEXT NOT NULL, places TEXT NOT NULL, scores TEXT NOT NULL,
    faults TEXT NOT NULL, log BLOB NOT NULL, finished REAL NOT NULL)
"""


def ensure(db: sqlite3.Connection) -> None:
    """Make the table when this contest has none yet (older contest folders have none)."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'table_games'").fetchone() is None:
        with store.writing(db):
            db.execute(SCHEMA)


def record(
    db: sqlite3.Connection,
    key: str,
    seats: list[dict[str, Any]],
    places: list[int],
    scores: list[int],
    faults: list[tuple[int, str, str, int]],
    log: list[dict[str, Any]],
) -> bool:
    """Store one finished table game. ``seats[s]`` says who sat at seat ``s``: ``{"kind":
    "person", "who": [role, id], "name": ...}`` or ``{"kind": "bot", "submission": id, "name":
    ...}``. Returns False when the key is stored already."""
    ensure(db)
    with store.writing(db):
        if db.execute("SELECT 1 FROM table_games WHERE key = ?", (key,)).fetchone():
            return False
        db.execute(
            "INSERT INTO table_games VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                json.dumps(seats),
                json.dumps(places),
                json.dumps(scores),
                json.dumps(faults),
                store.pack(log),
                time.time(),
            ),
        )
    return True


def game(db: sqlite3.Connection, key: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """A stored table game's seats and events, or None."""
    ensure(db)
    row = db.execute("SELECT seats, log FROM table_games WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    try:
        seats = json.loads(row["seats"])
    except ValueError:
        seats = []
    return [s for s in seats if isinstance(s, dict)], store.unpack(row["log"])


def recent(db: sqlite3.Connection, limit: int = 20) -> list[dict[str, Any]]:
    """The newest finished table games, for the tables page."""
    ensure(db)
    rows = db.execute("SELECT key, seats, finished FROM table_games ORDER BY finished DESC LIMIT ?", (limit,))
    out = []
    for r in rows:
        try:
            names = [str(s.get("name", "?")) for s in json.loads(r["seats"])]
        except (ValueError, AttributeError):
            names = []
        out.append({"key": r["key"], "players": names, "finished": r["finished"]})
    return out


def count(db: sqlite3.Connection) -> int:
    ensure(db)
    return int(db.execute("SELECT COUNT(*) FROM table_games").fetchone()[0])
