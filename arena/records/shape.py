"""The shape of a game record's lines, checked once on the way in (docs/record-format.md).

Records handed to the organiser are hostile input: any field may hold any JSON
value. :func:`check_header` and :func:`check_event` check one parsed line against
the format (each documented field's type, seats within the table, cards as
R1.2 writes them, lists "per seat" with one entry a seat, numbers bounded) and
return a fresh event holding only the documented fields (readers ignore the
fields they do not know), its text made storable (a lone surrogate becomes a
visible escape). Everything after them (``arena replay``'s log, ``arena view``'s
page) may then index the events without a guard. Whether the game obeys the
rules is not checked here: that is ``arena verify``'s independent checker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..game.cards import RANKS, SUITS, Card
from ..trust.text import storable

#: Largest magnitude of a number in a record (scores, points, rounds): a 64-bit integer.
MAX_INT = 2**63 - 1
#: Largest magnitude of a game line's seed (arena writes 64-bit seeds derived from the run's seed).
MAX_SEED = 2**256

CARD_NAMES = frozenset(str(Card(r + s)) for r in RANKS for s in SUITS)


class ShapeError(ValueError):
    """A record line whose fields are not the format's."""


def _show(value: Any) -> str:
    """A short description of a hostile value for an error line (never its whole text)."""
    if isinstance(value, bool) or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, str):
        return repr(value[:24] + ("..." if len(value) > 24 else ""))
    if isinstance(value, int):
        return f"a number of {len(str(abs(value)))} digits" if abs(value) > 10**12 else str(value)
    if isinstance(value, float):
        return repr(value)
    return "a list" if isinstance(value, list) else "an object"


#: A check of one field's value: (value, number of seats) -> the clean value.
Check = Callable[[Any, int], Any]


def integer(value: Any, n: int, low: int = -MAX_INT, high: int = MAX_INT, what: str = "a whole number") -> int:
    if type(value) is not int or not low <= value <= high:
        raise ShapeError(f"must be {what}, not {_show(value)}")
    return value


def count(value: Any, n: int) -> int:
    return integer(value, n, 0, MAX_INT, "a whole number 0 or more")


def seat(value: Any, n: int) -> int:
    return integer(value, n, 0, n - 1, f"a seat 0 to {n - 1}")


def seat_or_null(value: Any, n: int) -> int | None:
    return None if value is None else seat(value, n)


def text(value: Any, n: int) -> str:
    if type(value) is not str:
        raise ShapeError(f"must be text, not {_show(value)}")
    return storable(value)


def flag(value: Any, n: int) -> bool:
    if type(value) is not bool:
        raise ShapeError(f"must be true or false, not {_show(value)}")
    return value


def card(value: Any, n: int) -> str:
    if type(value) is not str or value not in CARD_NAMES:
        raise ShapeError(f"must be a card like '10h' (R1.2), not {_show(value)}")
    return value


def suit(value: Any, n: int) -> str:
    if type(value) is not str or value not in SUITS:
        raise ShapeError(f"must be a suit ({', '.join(SUITS)}), not {_show(value)}")
    return value


def rank(value: Any, n: int) -> str:
    if type(value) is not str or value not in RANKS:
        raise ShapeError(f"must be a rank ({', '.join(RANKS)}), not {_show(value)}")
    return value


def listing(item: Check, *, per_seat: bool = False, most: int = 36) -> Check:
    """A list of ``item`` values: one a seat (``per_seat``), or at most ``most`` of them."""

    def check(value: Any, n: int) -> list[Any]:
        if type(value) is not list:
            raise ShapeError(f"must be a list, not {_show(value)}")
        if per_seat and len(value) != n:
            raise ShapeError(f"must have one entry a seat ({n}), not {len(value)}")
        if len(value) > most:
            raise ShapeError(f"must have at most {most} entries, not {len(value)}")
        out = []
        for i, v in enumerate(value):
            try:
                out.append(item(v, n))
            except ShapeError as exc:
                raise ShapeError(f"[{i}] {exc}") from None
        return out

    return check


cards = listing(card)
seats = listing(seat, most=6)
per_seat_ints = listing(integer, per_seat=True)

#: Each event's fields (docs/record-format.md, arena/game/events.py): name -> (check, required).
EVENT_FIELDS: dict[str, dict[str, tuple[Check, bool]]] = {
    "deal": {
        "round": (count, True),
        "first": (seat, True),
        "hands": (listing(cards, per_seat=True), True),
        "stock": (cards, True),
        "scores": (per_seat_ints, True),
    },
    "put": {"seat": (seat, True), "card": (card, True), "suit": (suit, False), "opening": (flag, False)},
    "draw": {"seat": (seat, True), "card": (card, True)},
    "finish": {"seat": (seat, True)},
    "penalty": {"seat": (seat, True), "card": (card, True), "rank": (rank, True)},
    "skip": {"seat": (seat, True)},
    "reshuffle": {"stock": (cards, True)},
    "fault": {"seat": (seat, True), "kind": (text, True), "detail": (text, True)},
    "say": {"seat": (seat, True), "text": (text, True), "output": (flag, False), "capped": (flag, False)},
    "round": {
        "round": (count, True),
        "winner": (seat_or_null, True),
        "points": (per_seat_ints, True),
        "scores": (per_seat_ints, True),
        "burned": (seats, True),
    },
    "end": {
        "scores": (per_seat_ints, True),
        "losers": (seats, True),
        "places": (listing(lambda v, n: integer(v, n, 1, n, f"a place 1 to {n}"), per_seat=True), True),
        "rounds": (count, True),
    },
}

#: The one record format version this reader knows.
VERSION = 1


def _fields(kind: str, obj: dict[str, Any], spec: dict[str, tuple[Check, bool]], n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"event": kind}
    for name, (check, required) in spec.items():
        if name not in obj:
            if required:
                raise ShapeError(f"a {kind!r} line needs {name!r}")
            continue
        try:
            out[name] = check(obj[name], n)
        except ShapeError as exc:
            raise ShapeError(f"{kind} {name}{'' if str(exc).startswith('[') else ' '}{exc}") from None
    return out


def _player(value: Any, i: int) -> dict[str, Any]:
    if type(value) is not dict:
        raise ShapeError(f"must be an object, not {_show(value)}")
    out = _fields("player", value, {"seat": (seat, True), "name": (text, True), "bot": (text, True)}, i + 1)
    if out["seat"] != i:
        raise ShapeError(f"seat must be {i} (its place in the list), not {out['seat']}")
    del out["event"]
    return out


def _rules(value: Any, n: int) -> dict[str, Any]:
    """The rules in force: ``name``, ``points`` as {rank: points}, every other knob a plain value."""
    if type(value) is not dict:
        raise ShapeError(f"must be an object, not {_show(value)}")
    out: dict[str, Any] = {}
    for key, v in value.items():
        if key == "points":
            if type(v) is not dict or not all(k in RANKS for k in v):
                raise ShapeError(f"points must map ranks to points, not {_show(v)}")
            out[key] = {k: integer(p, n) for k, p in v.items()}
        elif v is None or type(v) in (bool, int, str):
            out[storable(key)] = integer(v, n) if type(v) is int else storable(v) if type(v) is str else v
        else:
            raise ShapeError(f"{_show(key)} must be a number, text, true, false or null, not {_show(v)}")
    if type(out.get("name")) is not str:
        raise ShapeError("needs the variant's 'name' as text")
    return out


def check_header(obj: dict[str, Any]) -> dict[str, Any]:
    """A ``game`` line: the clean line (its players give the number of seats for the rest).

    :raises ShapeError: a field is missing or of the wrong shape.
    """
    version = obj.get("version")
    if type(version) is not int or version != VERSION:
        raise ShapeError(f"game version must be {VERSION} (the format this arena reads), not {_show(version)}")
    players = obj.get("players")
    if type(players) is not list or not 2 <= len(players) <= 6:
        raise ShapeError(f"game players must be a list of 2 to 6 seats (R2.1), not {_show(players)}")
    clean_players = []
    for i, p in enumerate(players):
        try:
            clean_players.append(_player(p, i))
        except ShapeError as exc:
            raise ShapeError(f"game players[{i}] {exc}") from None
    spec: dict[str, tuple[Check, bool]] = {
        "game": (text, True),
        "seed": (lambda v, n: integer(v, n, -MAX_SEED, MAX_SEED, "a whole number below 2**256"), True),
        "rules": (_rules, True),
    }
    out = _fields("game", obj, spec, len(players))
    return {"event": "game", "version": VERSION, "game": out["game"], "seed": out["seed"],
            "players": clean_players, "rules": out["rules"]}  # fmt: skip


def check_event(obj: dict[str, Any], n: int) -> dict[str, Any]:
    """A line after the ``game`` line, in a game of ``n`` seats: the clean line.

    :raises ShapeError: an unknown event, or a field missing or of the wrong shape.
    """
    kind = obj.get("event")
    spec = EVENT_FIELDS.get(kind) if isinstance(kind, str) else None
    if spec is None or not isinstance(kind, str):
        raise ShapeError(f"unknown event {_show(kind)} (known: game, {', '.join(EVENT_FIELDS)})")
    return _fields(kind, obj, spec, n)
