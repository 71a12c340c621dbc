"""Protocol v1 for bot programs (docs/protocol.md): the messages the referee sends, and reading
the bot's lines. The view is built from the seat's :class:`~arena.referee.SeatContext` only;
history events are the public events (:func:`arena.visibility.public_data`, through the
context's shared feed), so R10 is decided where it is for every other seat.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .failures import ProtocolViolation

if TYPE_CHECKING:
    from ..moves import Move
    from ..referee import SeatContext

#: The protocol's version, sent in every ``start_game``.
VERSION = 1

#: The actions a bot may send, and the fields each may carry.
ACTIONS: dict[str, frozenset[str]] = {
    "put": frozenset({"action", "card", "suit"}),
    "draw": frozenset({"action"}),
    "finish": frozenset({"action"}),
    "say": frozenset({"action", "text"}),
    "error": frozenset({"action", "message"}),
}


def encode(message: dict[str, Any]) -> bytes:
    """One line of JSON (ASCII only: no byte of it can be a newline but the last)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True).encode() + b"\n"


def view(table: SeatContext, move: Move, names: tuple[str, ...], history: list[Any]) -> dict[str, Any]:
    """The seat's view of its move, as ``turn`` gives it to a Python bot (docs/protocol.md)."""
    counts = table.counts()
    n = len(counts) // 3
    _, _, pile = table.pile_since((-1, 0))
    return {
        "seat": move.seat,
        "first": move.first,
        "hand": [c._text for c in move.hand],
        "top": move.top._text,
        "suit": move.suit,
        "pile": pile,
        "put_this_move": [c._text for c in move.put],
        "stock": move.stock,
        "players": [
            {"seat": s, "name": names[s], "cards": counts[s], "score": counts[n + s], "skips": counts[2 * n + s]}
            for s in range(n)
        ],
        "history": history,
        "puttable": [c._text for c in move.puttable()],
        "can_draw": move.can_draw(),
        "can_finish": move.can_finish(),
    }


def parse_action(line: bytes) -> dict[str, Any]:
    """A bot's action line, checked for shape (not for legality). Raises :class:`ProtocolViolation`."""
    try:
        data = json.loads(line)
    except RecursionError:
        raise ProtocolViolation("a line nested too deep") from None
    except ValueError as exc:
        raise ProtocolViolation(f"a line that is not JSON ({str(exc)[:60]})") from None
    if type(data) is not dict:
        raise ProtocolViolation("a line that is not a JSON object")
    kind = data.get("action")
    allowed = ACTIONS.get(kind) if type(kind) is str else None
    if allowed is None:
        raise ProtocolViolation(f"an unknown action {str(kind)[:20]!r}")
    extra = set(data) - allowed
    if extra:
        raise ProtocolViolation(f"unknown field {sorted(extra)[0][:20]!r} in a {kind!r} action")
    if kind == "put" and (type(data.get("card")) is not str or type(data.get("suit", None)) not in (str, type(None))):
        raise ProtocolViolation("a put without a card text")
    if kind == "error" and type(data.get("message")) is not str:
        raise ProtocolViolation("an error without a message")
    if kind == "say" and type(data.get("text")) is not str:
        raise ProtocolViolation("a say without a text")
    return data


def parse_ready(line: bytes) -> None:
    """The answer to ``start_game``: ``{"type": "ready"}``."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        data = None
    if data != {"type": "ready"}:
        raise ProtocolViolation('the answer to start_game is not {"type":"ready"}')
