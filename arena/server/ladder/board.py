"""The leaderboard, computed once per change of the contest database and shared by every reader
(the page, the API and each open live page's websocket), so readers cost no query while nothing
changed, and at most one query each :attr:`Board.fresh` seconds while the ladder writes.

A change is seen with SQLite's ``PRAGMA data_version`` on one long-lived read connection (it
moves whenever another connection commits); while the ladder stores games many times a second,
a board younger than ``fresh`` seconds is served as it is (docs/RULINGS.md 91).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..contest import rounds
from ..store import database as store

#: Seconds a computed board is served without looking at the database (docs/RULINGS.md 91).
FRESH_SECONDS = 0.25


class Board:
    """``get()`` (from a worker thread): the current value of ``compute(db)``."""

    def __init__(
        self,
        folder: Path,
        compute: Callable[[sqlite3.Connection], dict[str, Any]] | None = None,
        fresh: float = FRESH_SECONDS,
    ) -> None:
        self.folder = folder
        self.compute = compute or (lambda db: rounds.leaderboard(db))  # looked up at each call
        self.fresh = fresh
        self.computed = 0  # how many times the board was computed (for tests and the benchmark)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._version: int | None = None
        self._value: dict[str, Any] | None = None
        self._text = ""  # the value as JSON, made once per value for every live socket
        self._at = 0.0

    def get(self) -> dict[str, Any]:
        """The board; callers must not change it (it is shared)."""
        with self._lock:
            now = time.monotonic()
            if self._value is not None and now - self._at < self.fresh:
                return self._value
            if self._db is None:
                self._db = store.open_db(self.folder)
            version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
            if self._value is None or version != self._version:
                self._value = self.compute(self._db)
                self._text = ""
                self._version = version
                self.computed += 1
            self._at = now
            return self._value

    def text(self) -> str:
        """The board as JSON (what a live socket sends), serialised once per computed board."""
        self.get()
        with self._lock:  # _text is emptied whenever _value changes, under this lock
            if not self._text:
                self._text = json.dumps(self._value)
            return self._text

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
