"""The seat contract: how the occupant of a seat is made, one protocol for every kind of bot.

A :class:`SeatFactory` makes the occupant of one seat for one game, ``factory(bot_key, seat)``:
a :class:`~arena.game.referee.Player` (played in the referee's process: a trusted bot, a
person) or a :class:`~arena.game.referee.RemoteSeat` (played in another process: a Python bot
file, a program), its bot seeded from the game's bot key (:func:`arena.game.seeds.game_seeds`)
and the seat. Its :meth:`~SeatFactory.stream` is a :class:`Stream`: a factory for a sequence of
games, one at a time, that never plays one deal twice (a sandboxed bot's stream keeps one
process for all of them: docs/security/jail.md, "Streams"). :meth:`~SeatFactory.close` releases
what the factory holds (processes, staged files). Every factory has all three: one in the
referee's process gets the trivial ones of :class:`InProcessFactory`.

:class:`~arena.seats.seating.Seating` is what uses factories; the sandbox's own
(:mod:`arena.sandbox.seat`) keep a process per stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..game.referee import Seat


class Stream(Protocol):
    """A factory whose games, one at a time, share no deal: ``stream(bot_key, seat, deal=key)``
    raises ``ValueError`` for a ``deal`` it has played (:attr:`deals`)."""

    deals: set[Any]

    def __call__(self, bot_key: Any, seat: int, deal: Any = None) -> Seat: ...
    def close(self) -> None: ...


class SeatFactory(Protocol):
    """Makes the occupant of a seat for one game; :meth:`stream` for a sequence of games."""

    name: str

    def __call__(self, bot_key: Any, seat: int) -> Seat: ...
    def stream(self) -> Stream: ...
    def close(self) -> None: ...


class DealCheck:
    """What every stream keeps: the deals it has played, and the check that refuses a repeat."""

    def __init__(self) -> None:
        self.deals: set[Any] = set()

    def admit(self, deal: Any) -> None:
        """Note ``deal`` (None: not told). :raises ValueError: the stream has played it."""
        if deal is not None:
            if deal in self.deals:
                raise ValueError("a stream never plays one deal twice")
            self.deals.add(deal)


class InProcessFactory:
    """A factory of seats played in the referee's process (``make(bot_key, seat)``): nothing
    outlives a game, so a stream is the factory with the deal check, and there is nothing to close."""

    def __init__(self, name: str, make: Callable[[Any, int], Seat] | None = None) -> None:
        self.name = name
        self.make = make

    def __call__(self, bot_key: Any, seat: int) -> Seat:
        if self.make is None:
            raise NotImplementedError(f"{type(self).__name__} makes no seat")
        return self.make(bot_key, seat)

    def stream(self) -> InProcessStream:
        return InProcessStream(self)

    def close(self) -> None:
        pass


class InProcessStream(DealCheck):
    """The stream of an :class:`InProcessFactory`: a fresh seat a game, as without a stream."""

    def __init__(self, factory: InProcessFactory) -> None:
        super().__init__()
        self.factory = factory

    def __call__(self, bot_key: Any, seat: int, deal: Any = None) -> Seat:
        self.admit(deal)
        return self.factory(bot_key, seat)

    def close(self) -> None:
        pass


__all__ = ["DealCheck", "InProcessFactory", "InProcessStream", "SeatFactory", "Stream"]
