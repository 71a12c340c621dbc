"""The server's log: one line for each thing that happened (a check's verdict, a worker started or
restarted, the final started or published, a round opened, the ladder paused, resumed, pruned or
stopped at its disk budget), written on the server's stderr and kept in the contest database
(``events``, schema 3) for the desk's health, whichever process it happened in: the server, one of
its workers, or a command run beside it.

A line is ``2025-06-01 14:03:07 arena: WHAT``; an error's reads ``... arena: error: WHAT``. Keeping
the line is best effort: a database that cannot be written (full, read-only) still gets the line
on stderr, and the work that logged it goes on.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from typing import Any

from ...trust.text import escape
from . import database as store

#: Event lines kept in the database (the oldest go first); the desk reads the last hour's.
KEEP = 5000
LEVELS = ("info", "warning", "error")


def line(text: str, level: str = "info", when: float | None = None) -> str:
    """The log line for ``text`` (one line: control characters shown escaped, at most 600 characters)."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() if when is None else when))
    tag = "" if level == "info" else f"{level}: "
    return f"{stamp} arena: {tag}{escape(text, 600)}"


def say(db: sqlite3.Connection | None, text: str, level: str = "info") -> None:
    """Log ``text``: its line on stderr, and kept in ``db`` (when given and writable)."""
    if level not in LEVELS:
        raise ValueError(f"level {level!r}")
    now = time.time()
    try:
        sys.stderr.write(line(text, level, now) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed stderr: the database still keeps it
        pass
    if db is None:
        return
    try:
        with store.writing(db):
            cur = db.execute("INSERT INTO events (at, level, text) VALUES (?, ?, ?)", (now, level, escape(text, 600)))
            if int(cur.lastrowid or 0) % 100 == 0:  # now and then, the oldest beyond KEEP go
                db.execute("DELETE FROM events WHERE id <= ?", (int(cur.lastrowid or 0) - KEEP,))
    except sqlite3.Error:
        pass


def say_in(folder: str | os.PathLike[str], text: str, level: str = "info") -> None:
    """:func:`say` from a process holding no connection to the contest database."""
    try:
        db = store.open_db(folder)
    except store.ContestError:
        say(None, text, level)
        return
    try:
        say(db, text, level)
    finally:
        db.close()


def recent(db: sqlite3.Connection, since: float, limit: int = 200) -> list[dict[str, Any]]:
    """The events logged since ``since`` (a time), newest first."""
    rows = db.execute(
        "SELECT CAST(at AS REAL) AS at, level, text FROM events WHERE at >= ? ORDER BY id DESC LIMIT ?",
        (since, limit),
    ).fetchall()
    return [{"at": float(r["at"] or 0.0), "level": str(r["level"]), "text": str(r["text"])} for r in rows]


def count(db: sqlite3.Connection, since: float, level: str) -> int:
    row = db.execute("SELECT COUNT(*) FROM events WHERE at >= ? AND level = ?", (since, level)).fetchone()
    return int(row[0])
