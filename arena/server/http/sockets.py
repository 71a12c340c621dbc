"""The open websockets that act for a person (a seat at a table), so that signing out, and the
organiser disabling an author, ends them.

A websocket is checked once, when it opens (its session, :class:`.auth.SignOut`); a socket opened
before its person signed out kept acting after it. Each such socket is now registered here with the
person and the time their session was made: signing out closes that person's sockets at once
(:meth:`PersonSockets.close_person`), and :meth:`PersonSockets.watch` looks at the contest database
every :data:`WATCH_SECONDS` while any is open, closing those whose session a later sign-out or a
disable (``arena contest disable``, another process) has voided.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Seconds between the watcher's looks at who signed out or was disabled (only while sockets are open).
WATCH_SECONDS = 1.0
#: The close code a socket gets when its person's session ends (4000-4999: the application's own).
SIGNED_OUT = 4003


@dataclass
class _Open:
    person: tuple[str, Any]
    made: float  # when its session was made (sign-in time); -inf when unknown: void at any sign-out
    close: Callable[[], None]


class PersonSockets:
    """The registry of open sockets acting for a person (in the server's process, on its event loop)."""

    def __init__(self) -> None:
        self.open: dict[int, _Open] = {}
        self._keys = itertools.count()

    def add(self, person: tuple[str, Any], made: object, close: Callable[[], None]) -> int:
        """Register a socket of ``person`` whose session was made at ``made``; ``close()`` ends it.
        Returns the key to :meth:`remove` it with when it ends."""
        key = next(self._keys)
        when = float(made) if isinstance(made, int | float) and not isinstance(made, bool) else -math.inf
        self.open[key] = _Open(person, when, close)
        return key

    def remove(self, key: int) -> None:
        self.open.pop(key, None)

    def close_person(self, person: tuple[str, Any], cut: float = math.inf) -> int:
        """Close every socket of ``person`` whose session was made at or before ``cut``; how many."""
        ended = [k for k, s in self.open.items() if s.person == person and s.made <= cut]
        for key in ended:
            self.open.pop(key).close()
        return len(ended)

    def close_voided(self, cuts: dict[tuple[str, Any], float]) -> int:
        """Close the sockets whose person has a cut (signed out or disabled at that time) after their session."""
        return sum(self.close_person(person, cut) for person, cut in cuts.items())

    async def watch(self, folder: Path, seconds: float = WATCH_SECONDS) -> None:
        """Until cancelled: every ``seconds``, while sockets of signed-in people are open, read their
        sign-out times from the database and close the sockets they void."""
        from ..store.database import ContestError

        while True:
            await asyncio.sleep(seconds)
            people = {s.person for s in self.open.values() if s.person[0] in ("author", "organiser")}
            if not people:
                continue
            try:
                cuts = await asyncio.to_thread(cuts_of, folder, people)
            except (ContestError, sqlite3.Error, OSError):  # a database busy or gone a moment: look again
                continue
            self.close_voided(cuts)


def cuts_of(folder: Path, people: set[tuple[str, Any]]) -> dict[tuple[str, Any], float]:
    """Each of ``people``'s sign-out (or disable) time, those who have one; a damaged time voids all."""
    from ..store import database as store
    from ..store.authors import signed_out_key

    db = store.open_db(folder)
    try:
        keys = {signed_out_key(p): p for p in people}
        marks = "?, " * (len(keys) - 1) + "?"
        rows = db.execute(f"SELECT key, value FROM contest WHERE key IN ({marks})", list(keys)).fetchall()
    finally:
        db.close()
    cuts = {}
    for key, value in rows:
        try:
            cut = float(value)
        except (TypeError, ValueError):
            cut = math.inf
        cuts[keys[key]] = cut if math.isfinite(cut) else math.inf  # damaged: void, to be safe
    return cuts
