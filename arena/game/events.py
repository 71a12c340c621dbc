"""The record's events as types: one ``TypedDict`` per event, and the fault kinds.

A game record is a list of plain JSON objects (docs/record-format.md); these
types say which keys each one has, so the engine that writes them, the
replay and the human seat that read them, and type checkers agree. They are
``TypedDict``s, so an event is still a plain ``dict`` at run time (no cost in
the referee's hot loop, and ``json.dumps`` writes it as it is).

Cards are their text (``"10h"``), seats are 0-based ints.
"""

from enum import StrEnum
from typing import Any, Literal, NotRequired, TypedDict


class FaultKind(StrEnum):
    """What a bot did wrong (a ``fault`` event's ``kind``); the value is what records hold."""

    EXCEPTION = "exception"  #: the bot's code raised (or made an illegal action it did not catch)
    ILLEGAL_FINISH = "illegal-finish"  #: the bot returned from ``move`` without a finished move
    TIMEOUT = "timeout"  #: past the move limit or the game's time bank (sandbox)
    CRASH = "crash"  #: the worker died, broke the protocol, or the bot could not be loaded
    MEMORY = "memory"  #: a bot program went over its memory limit (sandbox; its process is gone)
    RETIRED = "retired"  #: too many faults, or a fault that retires at once: the fallback plays


class PlayerEntry(TypedDict):
    seat: int
    name: str
    bot: str


class GameEvent(TypedDict):
    event: Literal["game"]
    version: int
    game: str
    seed: Any
    players: list[PlayerEntry]
    rules: dict[str, Any]


class DealEvent(TypedDict):
    event: Literal["deal"]
    round: int
    first: int
    hands: list[list[str]]
    stock: list[str]  #: top first
    scores: list[int]


class PutEvent(TypedDict):
    event: Literal["put"]
    seat: int
    card: str
    suit: NotRequired[str]  #: the suit a jack orders (R6.4)
    opening: NotRequired[bool]  #: the round's opening card (R3.3)


class DrawEvent(TypedDict):
    event: Literal["draw"]
    seat: int
    card: str


class FinishEvent(TypedDict):
    event: Literal["finish"]
    seat: int


class PenaltyEvent(TypedDict):
    event: Literal["penalty"]
    seat: int
    card: str
    rank: str  #: the rank whose effect made the draw: "7" or "8"


class SkipEvent(TypedDict):
    event: Literal["skip"]
    seat: int


class ReshuffleEvent(TypedDict):
    event: Literal["reshuffle"]
    stock: list[str]


class FaultEvent(TypedDict):
    event: Literal["fault"]
    seat: int
    kind: str  #: a :class:`FaultKind` value
    detail: str


class SayEvent(TypedDict):
    event: Literal["say"]
    seat: int
    text: str
    output: NotRequired[bool]  #: captured ``print`` output rather than ``turn.say``
    capped: NotRequired[bool]  #: the one marker line of a seat's say or output cap (``Game.say``)


class RoundEvent(TypedDict):
    event: Literal["round"]
    round: int
    winner: int | None
    points: list[int]
    scores: list[int]
    burned: list[int]


class EndEvent(TypedDict):
    event: Literal["end"]
    scores: list[int]
    losers: list[int]
    places: list[int]
    rounds: int


Event = (
    GameEvent
    | DealEvent
    | PutEvent
    | DrawEvent
    | FinishEvent
    | PenaltyEvent
    | SkipEvent
    | ReshuffleEvent
    | FaultEvent
    | SayEvent
    | RoundEvent
    | EndEvent
)

#: Every event name, in the order a game first writes them.
EVENT_NAMES: tuple[str, ...] = (
    "game",
    "deal",
    "put",
    "draw",
    "finish",
    "penalty",
    "skip",
    "reshuffle",
    "fault",
    "say",
    "round",
    "end",
)

__all__ = [
    "FaultKind",
    "Event",
    "EVENT_NAMES",
    "GameEvent",
    "DealEvent",
    "PutEvent",
    "DrawEvent",
    "FinishEvent",
    "PenaltyEvent",
    "SkipEvent",
    "ReshuffleEvent",
    "FaultEvent",
    "SayEvent",
    "RoundEvent",
    "EndEvent",
    "PlayerEntry",
]
