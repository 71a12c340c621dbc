"""A bot's own output per game, for its author alone, and the smoke games its check kept.

*Output* is what a seat's bot wrote for its author in one game (a sandboxed Python bot's prints,
a program's standard error, a 2012 bot's ``console`` lines: :class:`arena.sandbox.seat.OwnOutput`,
the last 4 KiB a seat and game). A ladder game's outputs are stored with it, one row a seat that
wrote any (``outputs``, schema 3), in the game's own transaction
(:func:`arena.server.store.database.record_game`); dropping a game's record drops them with it
(:func:`drop`). An upload's check keeps the records of its smoke games in which it faulted, each
with its seat's output (``check_games``: the first
:data:`arena.authoring.check.KEPT_RECORDS`), stored just before the check's report, so its author
can replay them.

Who may read them is the routes' business (:mod:`arena.server.routes.authors`): a seat's output
goes to the author of the bot in that seat and to the organiser, never to anyone else (R10's
rule for printed output, docs/security/server.md "A bot's own output"). What is read back is bounded
whatever the database holds (it is untrusted input: an edited file, a damaged row).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Collection, Sequence
from typing import Any

#: Bytes of one seat's output stored, and read back, at most (the seats keep 4 KiB; room for its
#: note of what was cut).
OUTPUT_BYTES = 8192
#: Bytes of one kept smoke game's record read back at most (a game of 6 is about 20 KB).
CHECK_RECORD_BYTES = 4 * 2**20


def pack_text(text: str) -> bytes:
    """A seat's output as stored: its UTF-8 (at most :data:`OUTPUT_BYTES`), compressed."""
    return zlib.compress(text.encode("utf-8", "replace")[:OUTPUT_BYTES], 6)


def unpack_text(blob: Any) -> str:
    """A stored output as text, at most :data:`OUTPUT_BYTES` of it; "" for anything unreadable."""
    if not isinstance(blob, bytes):
        return ""
    try:
        data = zlib.decompressobj().decompress(blob, OUTPUT_BYTES)
    except zlib.error:
        return ""
    return data.decode("utf-8", "replace")


def insert(db: sqlite3.Connection, game: str, outputs: Sequence[str]) -> None:
    """Store a game's outputs, seat by seat (a seat that wrote nothing gets no row); in the
    caller's transaction."""
    db.executemany(
        "INSERT OR REPLACE INTO outputs VALUES (?, ?, ?)",
        [(game, seat, pack_text(text)) for seat, text in enumerate(outputs) if text],
    )


def of_game(db: sqlite3.Connection, game: str, seats: Collection[int] | None = None) -> dict[int, str]:
    """The stored outputs of ``game``'s ``seats`` (None: every seat), seat -> text."""
    rows = db.execute("SELECT seat, text FROM outputs WHERE game = ?", (game,)).fetchall()
    found = {}
    for seat, blob in rows:
        if type(seat) is int and (seats is None or seat in seats):
            found[seat] = unpack_text(blob)
    return found


def drop(db: sqlite3.Connection, games: Sequence[str]) -> None:
    """Drop the outputs of ``games`` (whose records are reduced or removed); in the caller's transaction."""
    db.executemany("DELETE FROM outputs WHERE game = ?", [(g,) for g in games])


# -- the smoke games of a check ----------------------------------------------------------------


def save_check_games(db: sqlite3.Connection, submission: int, games: Sequence[dict[str, Any]]) -> None:
    """Keep ``games`` (``{"game", "seat", "log", "output"}``: :attr:`arena.authoring.check.CheckReport.records`,
    already bounded; ``log`` packed as a ladder game's is) in place of any kept before (a check made
    again); in the caller's transaction."""
    db.execute("DELETE FROM check_games WHERE submission = ?", (submission,))
    db.executemany(
        "INSERT OR REPLACE INTO check_games VALUES (?, ?, ?, ?, ?)",
        [(submission, str(g["game"]), int(g["seat"]), g["log"], pack_text(str(g["output"]))) for g in games],
    )


def check_games_kept(db: sqlite3.Connection, submission: int) -> dict[str, str]:
    """The smoke games kept of ``submission``'s check: game -> the bot's output in it."""
    rows = db.execute("SELECT game, output FROM check_games WHERE submission = ? ORDER BY rowid", (submission,))
    return {str(game): unpack_text(output) for game, output in rows}


def check_game(db: sqlite3.Connection, submission: int, game: str) -> tuple[int, list[dict[str, Any]], str] | None:
    """A kept smoke game: (the checked bot's seat, its record's events, the bot's output); None when
    not kept, or unreadable."""
    row = db.execute(
        "SELECT seat, log, output FROM check_games WHERE submission = ? AND game = ?", (submission, game)
    ).fetchone()
    if row is None or type(row[0]) is not int or not isinstance(row[1], bytes):
        return None
    try:
        data = json.loads(zlib.decompressobj().decompress(row[1], CHECK_RECORD_BYTES))
    except (zlib.error, ValueError, RecursionError):
        return None
    events = [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []
    return (row[0], events, unpack_text(row[2])) if events else None
