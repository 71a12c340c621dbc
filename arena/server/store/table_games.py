"""Where the tables people play (:mod:`arena.server.tables.hub`) are kept in the contest database:
each open table (``live_tables``: its seating, state and secret seed), each person's action at it
with the game's events up to it (``table_moves``: what the tables worker replays to resume a game
after a restart), and each game once it ends (``table_games``, with how it ended: ``finished`` or
``abandoned``). Schema 3 makes them (:mod:`arena.server.store.migrate`).

These games never feed the ladder: the ladder's ratings are read and written only with the
``games`` and ``seats`` tables (:func:`arena.server.store.database.record_game`), and a table's
game is written here only, in one transaction under the table's unique key (written once, never
twice), which also ends the table's live rows. A live table's rows are written by the one tables
worker that holds it (``live_tables.worker``): a worker that lost the table (a newer one resumed
it) writes nothing more.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from ...trust.numbers import whole_number
from . import database as store

#: How a recorded table game ended.
FINISHED, ABANDONED = "finished", "abandoned"


def record(
    db: sqlite3.Connection,
    key: str,
    seats: list[dict[str, Any]],
    places: list[int],
    scores: list[int],
    faults: list[tuple[int, str, str, int]],
    log: list[dict[str, Any]],
    outcome: str = FINISHED,
    worker: str | None = None,
) -> bool:
    """Store one ended table game and end its live rows, in one transaction. ``seats[s]`` says who
    sat at seat ``s``: ``{"kind": "person", "who": [role, id], "name": ...}`` or ``{"kind": "bot",
    "submission": id, "name": ...}``; an abandoned game has no ``places``. Returns False when the
    key is stored already, or (``worker`` given) when another worker holds the table now."""
    with store.writing(db):
        if worker is not None and not _holds(db, key, worker):
            return False
        if db.execute("SELECT 1 FROM table_games WHERE key = ?", (key,)).fetchone():
            return False
        db.execute(
            "INSERT INTO table_games (key, seats, places, scores, faults, log, finished, outcome)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                json.dumps(seats),
                json.dumps(places),
                json.dumps(scores),
                json.dumps(faults),
                store.pack(log),
                time.time(),
                outcome,
            ),
        )
        db.execute("DELETE FROM live_tables WHERE key = ?", (key,))
    return True


def game(db: sqlite3.Connection, key: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """A stored table game's seats and events, or None."""
    row = db.execute("SELECT seats, log FROM table_games WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    return _dicts(row["seats"]), store.unpack(row["log"])


def outcome(db: sqlite3.Connection, key: str) -> str | None:
    """How the stored table game ``key`` ended (None: no such game)."""
    row = db.execute("SELECT outcome FROM table_games WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _dicts(text: Any) -> list[dict[str, Any]]:
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return []
    return [s for s in data if isinstance(s, dict)] if isinstance(data, list) else []


def _ints(text: Any) -> list[int]:
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return []
    if not isinstance(data, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in data):
        return []
    return list(data)


def recent(db: sqlite3.Connection, limit: int = 20) -> list[dict[str, Any]]:
    """The newest ended table games, for the tables page: when each ended, how (``outcome``), and
    each seat's name, place (None: abandoned) and score, best place first."""
    rows = db.execute(
        "SELECT key, seats, places, scores, finished, outcome FROM table_games ORDER BY finished DESC LIMIT ?",
        (limit,),
    )
    out = []
    for r in rows:
        names = [str(s.get("name", "?")) for s in _dicts(r["seats"])]
        places, scores = _ints(r["places"]), _ints(r["scores"])
        ended = str(r["outcome"])
        seated = []
        for s, name in enumerate(names):
            place = places[s] if ended == FINISHED and len(places) == len(names) else None
            seated.append({"name": name, "place": place, "score": scores[s] if len(scores) == len(names) else None})
        seated.sort(key=lambda p: (p["place"] is None, p["place"] or 0))
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(float(r["finished"])))
        out.append({"key": r["key"], "players": names, "seats": seated, "date": when, "outcome": ended})
    return out


def count(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT COUNT(*) FROM table_games").fetchone()[0])


# -- open tables -----------------------------------------------------------------------------------


def put_table(db: sqlite3.Connection, key: str, spec: dict[str, Any], state: str, created: float) -> None:
    """Keep an open table's seating and state (``waiting`` or ``playing``), made or changed."""
    with store.writing(db):
        db.execute(
            "INSERT INTO live_tables (key, spec, state, created) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET spec = excluded.spec, state = excluded.state",
            (key, json.dumps(spec), state, created),
        )


def drop_table(db: sqlite3.Connection, key: str) -> None:
    """Forget an open table that never started (closed unplayed)."""
    with store.writing(db):
        db.execute("DELETE FROM live_tables WHERE key = ? AND state = 'waiting'", (key,))


def live(db: sqlite3.Connection) -> list[tuple[str, dict[str, Any], str, float]]:
    """Every open table: ``(key, spec, state, created)``, oldest first."""
    out = []
    for r in db.execute("SELECT key, spec, state, created FROM live_tables ORDER BY created"):
        try:
            spec = json.loads(r["spec"])
        except (TypeError, ValueError, RecursionError):
            continue
        if isinstance(spec, dict):
            out.append((str(r["key"]), spec, str(r["state"]), float(r["created"])))
    return out


def playing(db: sqlite3.Connection) -> list[str]:
    """The keys of the tables whose game has started (to be played, or resumed, by a worker)."""
    return [str(r[0]) for r in db.execute("SELECT key FROM live_tables WHERE state = 'playing' ORDER BY created")]


@dataclass
class Claim:
    """A started table as a worker takes it: its seating, secret seed (None: not drawn yet), how
    many workers took it before, and the people's actions so far ``(seat, action, events)``."""

    spec: dict[str, Any]
    seed: int | None
    resumes: int
    moves: list[tuple[int, dict[str, Any], list[dict[str, Any]]]]


def claim(db: sqlite3.Connection, key: str, worker: str) -> Claim | None:
    """Take the started table ``key`` for ``worker`` (whoever held it before writes no more).
    None: no such started table."""
    with store.writing(db):
        row = db.execute("SELECT spec, seed, resumes FROM live_tables WHERE key = ? AND state = 'playing'", (key,))
        found = row.fetchone()
        if found is None:
            return None
        db.execute("UPDATE live_tables SET worker = ?, resumes = resumes + 1 WHERE key = ?", (worker, key))
        moves = []
        for m in db.execute("SELECT seat, action, events FROM table_moves WHERE key = ? ORDER BY n", (key,)):
            try:
                action = json.loads(m["action"])
            except (TypeError, ValueError, RecursionError):
                action = None
            moves.append((int(m["seat"]), action if isinstance(action, dict) else {}, store.unpack(m["events"])))
    try:
        spec = json.loads(found["spec"])
    except (TypeError, ValueError, RecursionError):
        spec = {}
    return Claim(
        spec if isinstance(spec, dict) else {},
        whole_number(found["seed"], high=2**256, given="text"),
        int(found["resumes"]),
        moves,
    )


def _holds(db: sqlite3.Connection, key: str, worker: str) -> bool:
    row = db.execute("SELECT worker FROM live_tables WHERE key = ?", (key,)).fetchone()
    return row is not None and row[0] == worker


def set_seed(db: sqlite3.Connection, key: str, worker: str, seed: int) -> bool:
    """Keep the game's secret master seed, drawn by ``worker`` as it starts the game; False: another
    worker holds the table now."""
    with store.writing(db):
        if not _holds(db, key, worker):
            return False
        db.execute("UPDATE live_tables SET seed = ? WHERE key = ?", (str(seed), key))
    return True


def keep_move(
    db: sqlite3.Connection, key: str, worker: str, seat: int, action: dict[str, Any], events: list[dict[str, Any]]
) -> bool:
    """Add a person's action at ``seat`` with the game's events since the previous one, before the
    referee acts on it; False (nothing written): another worker holds the table now."""
    with store.writing(db):
        if not _holds(db, key, worker):
            return False
        n = db.execute("SELECT COUNT(*) FROM table_moves WHERE key = ?", (key,)).fetchone()[0]
        db.execute(
            "INSERT INTO table_moves VALUES (?, ?, ?, ?, ?)",
            (key, int(n), seat, json.dumps(action), store.pack(events)),
        )
    return True
