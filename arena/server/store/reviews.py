"""Where the desk's view of each upload is kept (``reviews``, schema 3): made once by the check
worker (:mod:`arena.server.contest.review`), read by the review page.

A view is JSON compressed with zlib; it is read back bounded (:data:`MAX_VIEW` bytes once
inflated) and checked by the page (:func:`arena.server.contest.review.shown`), like every row.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from typing import Any

from . import database as store

#: Bytes a stored view may inflate to (a 256 KiB upload's highlighted files and diff take a few MB).
MAX_VIEW = 64 * 2**20


def save(db: sqlite3.Connection, submission: int, view: dict[str, Any]) -> None:
    """Store (or replace) the view of ``submission``."""
    data = zlib.compress(json.dumps(view, separators=(",", ":")).encode(), 6)
    with store.writing(db):
        db.execute("INSERT OR REPLACE INTO reviews VALUES (?, ?, ?)", (submission, data, time.time()))


def load(db: sqlite3.Connection, submission: int) -> Any:
    """The stored view of ``submission`` as JSON data (unchecked), or None: none made yet, or unreadable."""
    row = db.execute("SELECT data FROM reviews WHERE submission = ?", (submission,)).fetchone()
    if row is None or not isinstance(row[0], bytes):
        return None
    try:
        inflater = zlib.decompressobj()
        text = inflater.decompress(row[0], MAX_VIEW)
        if inflater.unconsumed_tail:
            return None
        return json.loads(text)
    except (zlib.error, ValueError, RecursionError):
        return None


def made(db: sqlite3.Connection, submission: int) -> float | None:
    """When the view of ``submission`` was made (stored), or None: none yet."""
    row = db.execute("SELECT CAST(made AS REAL) FROM reviews WHERE submission = ?", (submission,)).fetchone()
    return float(row[0]) if row and isinstance(row[0], float) else None


def missing(db: sqlite3.Connection) -> int | None:
    """The oldest checked upload with no view yet (one an older arena checked, or whose worker died
    between its check and its view), or None."""
    row = db.execute(
        "SELECT id FROM submissions WHERE status IN ('clean', 'failed') AND id NOT IN (SELECT submission FROM reviews) "
        "ORDER BY id LIMIT 1"
    ).fetchone()
    return int(row[0]) if row else None


def previous(db: sqlite3.Connection, submission: int) -> tuple[int, int, bytes] | None:
    """The author's previous version of the bot of ``submission``: (its id, version number, bytes)."""
    row = db.execute(
        "SELECT p.id, p.version, p.source FROM submissions s JOIN submissions p ON p.bot = s.bot "
        "AND p.version < s.version WHERE s.id = ? ORDER BY p.version DESC LIMIT 1",
        (submission,),
    ).fetchone()
    if row is None or not isinstance(row[0], int) or not isinstance(row[1], int):
        return None
    return int(row[0]), int(row[1]), store.source_bytes(row[2])
