"""Disabling an author: their token stops signing in, and every session and open socket of theirs ends.

A disabled author's row keeps ``authors.disabled`` (the time; schema 3): :func:`.database.who`
refuses their token, and the sign-out time recorded with it (``signed_out:author:N``, what signing
out records) voids each of their sessions made before it, on the next request
(:class:`arena.server.http.auth.SignOut`) and on every open websocket within a second
(:class:`arena.server.http.sockets.PersonSockets`). Their uploads and bots stay as they are: the
desk's reject takes a version off the ladder (ruling 117). Enabling them again lets their token
sign in again; the sessions voided stay void.
"""

from __future__ import annotations

import sqlite3
import time

from . import database as store


def signed_out_key(who: tuple[str, object]) -> str:
    """The contest setting holding when ``who`` (``("author", id)``, ``("organiser", 0)``) last
    signed out, or was disabled: their sessions made before it are void."""
    return f"signed_out:{who[0]}:{who[1]}"


#: The author row house bots belong to (:mod:`arena.server.contest.house`): a name no invitation can
#: take (not a NAME_PATTERN), no token, never disabled nor enabled, not listed among the authors.
HOUSE_AUTHOR = "(house)"


def author_id(db: sqlite3.Connection, name: str) -> int:
    """The id of the author ``name`` (compared ignoring case, as names are unique that way).

    :raises store.ContestError: no such author."""
    row = db.execute("SELECT id FROM authors WHERE lower(name) = lower(?)", (name,)).fetchone()
    if row is None:
        raise store.ContestError(f"no author named {name!r} in this contest")
    return int(row[0])


def set_disabled(db: sqlite3.Connection, name: str, disabled: bool) -> bool:
    """Disable (or enable) the author ``name``; returns whether anything changed.

    :raises store.ContestError: no such author (the house bots' row is none)."""
    if name == HOUSE_AUTHOR:
        raise store.ContestError(f"{HOUSE_AUTHOR} holds the house bots, not an author: see arena contest house")
    author = author_id(db, name)
    now = time.time()
    with store.writing(db):
        was = db.execute("SELECT disabled FROM authors WHERE id = ?", (author,)).fetchone()[0]
        if (was is not None) == disabled:
            return False
        db.execute("UPDATE authors SET disabled = ? WHERE id = ?", (now if disabled else None, author))
        if disabled:  # every session made until now is void, as when they sign out
            db.execute("INSERT OR REPLACE INTO contest VALUES (?, ?)", (signed_out_key(("author", author)), repr(now)))
    return True
