"""Protocol v1 for bot programs (docs/protocol.md): the messages the referee sends, and reading
the bot's lines. The view is built from the seat's :class:`~arena.game.referee.SeatContext` only;
history events are the public events (:func:`arena.game.visibility.public_data`, through the
context's shared feed), so R10 is decided where it is for every other seat.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..failures import ProtocolViolation

if TYPE_CHECKING:
    from ...game.moves import Move
    from ...game.referee import SeatContext

#: The protocol's version, sent in every ``start_game``.
VERSION = 1

#: The actions a bot may send, and the fields each may carry.
ACTIONS: dict[str, frozenset[str]] = {
    "put": frozenset({"action", "card", "suit"}),
    "draw": frozenset({"action"}),
    "finish": frozenset({"action"}),
    "say": frozenset({"action", "text"}),
    "error": frozenset({"action", "message"}),
    # Searching ahead (docs/protocol.md): requests the referee answers with the forward model.
    "sample": frozenset({"action", "seed"}),
    "simulate": frozenset({"action", "seed", "worlds", "plans", "policy", "until", "max_moves"}),
}

#: Bounds of a ``simulate`` request (past them: a protocol violation). ``SIM_MOVES`` is
#: :data:`arena.botapi.forward.PLAYOUT_MOVES` (a test keeps them equal; this module imports no engine).
SIM_WORK = 4096  # worlds * plans
SIM_PLANS = 64
SIM_PLAN_ACTIONS = 40
SIM_MOVES = 1000
SIM_POLICIES = ("heuristic", "random")
SIM_UNTIL = ("round", "game")
#: A request's seed: an int with 0 <= seed < SEED_LIMIT.
SEED_LIMIT = 2**64


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
    if kind == "sample" or kind == "simulate":
        _check_search(kind, data)
    return data


def _int_in(data: dict[str, Any], key: str, low: int, high: int, kind: str) -> None:
    value = data.get(key)
    if type(value) is not int or not low <= value <= high:
        raise ProtocolViolation(f"a {kind} whose {key} is not an integer from {low} to {high}")


def _check_search(kind: str, data: dict[str, Any]) -> None:
    """The shape and bounds of a ``sample`` or ``simulate`` request (docs/protocol.md, "Searching ahead")."""
    _int_in(data, "seed", 0, SEED_LIMIT - 1, kind)
    if kind == "sample":
        return
    plans = data.get("plans")
    if type(plans) is not list or not 1 <= len(plans) <= SIM_PLANS:
        raise ProtocolViolation(f"a simulate whose plans are not a list of 1 to {SIM_PLANS} plans")
    _int_in(data, "worlds", 1, SIM_WORK // len(plans), kind)
    if data.setdefault("policy", SIM_POLICIES[0]) not in SIM_POLICIES:
        raise ProtocolViolation(f"a simulate whose policy is not one of {', '.join(SIM_POLICIES)}")
    if data.setdefault("until", SIM_UNTIL[0]) not in SIM_UNTIL:
        raise ProtocolViolation('a simulate whose until is not "round" or "game"')
    data.setdefault("max_moves", SIM_MOVES)
    _int_in(data, "max_moves", 0, SIM_MOVES, kind)
    for plan in plans:
        if type(plan) is not list or len(plan) > SIM_PLAN_ACTIONS:
            raise ProtocolViolation(f"a simulate plan that is not a list of at most {SIM_PLAN_ACTIONS} actions")
        for act in plan:
            if not _plan_action(act):
                raise ProtocolViolation('a plan action that is not ["put",card,suit|null], ["draw"] or ["finish"]')


def _plan_action(act: Any) -> bool:
    if type(act) is not list or not act:
        return False
    if act[0] == "put":
        return len(act) in (2, 3) and type(act[1]) is str and (len(act) == 2 or type(act[2]) in (str, type(None)))
    return len(act) == 1 and act[0] in ("draw", "finish")


def parse_ready(line: bytes) -> None:
    """The answer to ``start_game``: ``{"type": "ready"}``."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        data = None
    if data != {"type": "ready"}:
        raise ProtocolViolation('the answer to start_game is not {"type":"ready"}')
