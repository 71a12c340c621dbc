"""Rule R10, what each viewer sees of a game, decided in one place.

A game record (docs/record-format.md) holds everything: every hand, every
drawn card, the seed, every fault's detail, every line a sandboxed bot printed.
Three kinds of viewer see parts of it:

- **the organiser** (:data:`ORGANISER`) sees the whole record;
- **the public** (:data:`PUBLIC`) sees what every seat is told: plays, counts,
  effects, scores, ``say`` lines, who faulted and how. This is what a bot's
  ``turn.history`` holds, what a sandboxed seat is sent, and what the human
  seats tell a person of the others' moves;
- **a seat** (its number) sees the public part and its own secrets: its hand
  as dealt, the cards it drew, its own faults' details and its own printed
  output. This is what ``arena replay --seat N`` prints and ``arena view
  --seat N`` shows.

Every view of a seat asks :func:`seen_by` (or its two fast cases,
:func:`public_data` and :func:`seat_data`); none decides R10 by itself
(tests/game/test_visibility.py checks each view against this module).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

#: The viewer who sees the whole record.
ORGANISER: Final = "organiser"
#: The viewer who sees what every seat is told.
PUBLIC: Final = "public"
#: Who looks at a game: a seat's number, the public or the organiser.
Viewer = int | Literal["public", "organiser"]

_ATOMS = (str, int, float, bool, type(None))


def private_key(key: Any) -> bool:
    """Whether a mapping key is the referee's own, never shown to anyone but the organiser:
    a ``str`` (or ``str`` subclass) starting with ``_``. None exists today; the rule holds at
    every depth, so a view cannot carry one whichever way it is read."""
    return isinstance(key, str) and str.startswith(key, "_")


def plain(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, tuples of atoms) without ``_`` keys: what
    ``copy.deepcopy`` gives for an event, at a fraction of its cost (no memo: events share nothing)."""
    t = type(value)
    if t is dict:
        return {
            k: v if type(v) in _ATOMS else plain(v)
            for k, v in value.items()
            if (k[:1] != "_" if type(k) is str else not private_key(k))
        }
    if t is list:
        return [v if type(v) in _ATOMS else plain(v) for v in value]
    if t is tuple:
        return tuple(v if type(v) in _ATOMS else plain(v) for v in value)
    if t in _ATOMS:
        return value
    return copy.deepcopy(value)


def is_public(event: Mapping[str, Any]) -> bool:
    """Whether any part of a record event is public: all but a bot's printed output
    (``say`` lines marked ``output``), which only the organiser and its own seat see."""
    return not (event["event"] == "say" and event.get("output"))


def public_data(event: Mapping[str, Any]) -> dict[str, Any]:
    """The public part of a record event (call only when :func:`is_public`), as fresh plain data.

    Drawn cards become counts, a deal shows hand sizes and the stock size, a
    reshuffle the new stock's size, a fault its seat and kind (its detail may
    name a card the faulting seat holds); the seed is never shown. Keys starting
    with ``_`` are dropped at every depth. This runs for every event of every
    game a bot reads the history of: the common events are built directly.
    """
    kind = event["event"]
    if kind == "put" or kind == "finish":
        return {
            k: v if type(v) in _ATOMS else plain(v)
            for k, v in event.items()
            if (k[:1] != "_" if type(k) is str else not private_key(k))
        }
    if kind == "draw":
        return {"event": "draw", "seat": event["seat"]}
    if kind == "penalty":
        return {"event": "penalty", "seat": event["seat"], "rank": event["rank"]}
    if kind == "deal":
        return {
            "event": "deal",
            "round": event["round"],
            "first": event["first"],
            "hands": [len(h) for h in event["hands"]],
            "stock": len(event["stock"]),
            "scores": plain(tuple(event["scores"])),
        }
    if kind == "reshuffle":
        return {"event": "reshuffle", "stock": len(event["stock"])}
    if kind == "game":
        data: dict[str, Any] = plain({k: v for k, v in event.items() if k != "seed"})
    elif kind == "fault":
        data = plain({"event": "fault", "seat": event["seat"], "kind": event["kind"]})
    else:
        data = plain(dict(event))
    return data


def seat_data(event: Mapping[str, Any], seat: int) -> dict[str, Any] | None:
    """What ``seat`` saw of a record event, as fresh plain data; None when it saw nothing of it.

    The public part (:func:`public_data`) and the seat's own secrets: its hand in a
    deal, the card of its own draw or effect draw, its own fault's detail, its own
    printed output. Other seats' hands stay counts, their draws cards unnamed.
    """
    mine = event.get("seat") == seat
    if not is_public(event):
        output: dict[str, Any] | None = plain(dict(event)) if mine else None
        return output
    data = public_data(event)
    kind = event["event"]
    if kind == "deal":
        data["hands"] = [plain(list(h)) if s == seat else len(h) for s, h in enumerate(event["hands"])]
        data["scores"] = list(data["scores"])
    elif mine and (kind == "draw" or kind == "penalty"):
        data["card"] = event["card"]
    elif mine and kind == "fault" and "detail" in event:
        data["detail"] = plain(event["detail"])
    return data


def seen_by(event: Mapping[str, Any], viewer: Viewer) -> dict[str, Any] | None:
    """What ``viewer`` saw of ``event``: fresh plain data, or None when nothing of it."""
    if viewer == ORGANISER:
        whole: dict[str, Any] = plain(dict(event))
        return whole
    if viewer == PUBLIC:
        return public_data(event) if is_public(event) else None
    if type(viewer) is int:
        return seat_data(event, viewer)
    raise ValueError(f"a viewer is a seat number, {PUBLIC!r} or {ORGANISER!r}, not {viewer!r}")


def game_seen_by(events: Iterable[Mapping[str, Any]], viewer: Viewer) -> list[dict[str, Any]]:
    """Every event of a game as ``viewer`` saw it, in order; the events it saw nothing of left out."""
    return [shown for e in events if (shown := seen_by(e, viewer)) is not None]
