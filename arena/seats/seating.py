"""Seating a table: the one place a game is put together and handed to the referee.

``arena play``, ``arena check``, the tournament, the server's ladder and its tables each say
*who* sits where and *which* game it is; :class:`Seating` does the rest, the same way for all
of them (as Axelrod's tournament hands each match to one ``Match``): it makes each entrant's
:class:`~arena.seats.contract.SeatFactory` once (and keeps at most ``keep`` of those holding
processes), seats each :class:`Chair` with a fresh seat or its entrant's stream (never one deal
twice), stands a :class:`CrashedPlayer` in for a bot that cannot be loaded or seated, names
the seats, plays the game with :meth:`~arena.game.referee.Referee.play`, and closes every seat.
The game's deal seed and bot key come from :func:`arena.game.seeds.game_seeds` only
(:class:`~arena.game.seeds.GameSeeds`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import BotLoadError
from ..game.events import FaultKind
from ..game.referee import BotFault, GameOutcome, Referee, Seat
from ..game.rules import CONTEST, Rules
from ..game.seeds import GameSeeds
from .contract import InProcessFactory, SeatFactory, Stream

#: A stream's process is replaced after this many games (its record of deals played stays small).
STREAM_GAMES = 10_000


class CrashedPlayer:
    """Stands in for a bot that could not be loaded or seated: every call is a crash fault (the
    referee retires the seat, which places last; the fallback plays its cards)."""

    def __init__(self, name: str, detail: str) -> None:
        self.name = name
        self.detail = detail

    def _crash(self, *_: Any) -> None:
        raise BotFault(FaultKind.CRASH, f"could not load: {self.detail}")

    start_game = move = end_round = end_game = _crash

    def close(self) -> None:
        pass


def own_output(player: Seat) -> str:
    """What ``player``'s bot wrote for its author this game (a seat played in another process
    keeps it: :class:`arena.sandbox.seat.OwnOutput`); "" for an in-process seat."""
    read = getattr(player, "own_output", None)
    text = read() if callable(read) else ""
    return text if isinstance(text, str) else ""


@dataclass(frozen=True)
class Chair:
    """One seat of one game: the ``entrant`` who sits there (its factory is made and kept under
    that key), how the record names its code (``bot``) and the table names the seat (``name``;
    None: the seat's own name)."""

    entrant: Hashable
    bot: str
    name: str | None = None


class Seating:
    """Plays games between entrants whose factories ``make(entrant)`` builds, on first use.

    ``keep``: the most factories holding processes kept (the least recently used is closed with
    its streams; None: all); ``keep_streams``: the most streams kept between games (None: all);
    ``stand_ins``: a bot that cannot be loaded or seated plays as a :class:`CrashedPlayer` (else
    its :class:`~arena.errors.BotLoadError` or :class:`~arena.game.referee.BotFault` is raised);
    ``move_times``: time each move (:attr:`~arena.game.referee.GameOutcome.move_times`);
    ``on_event``: told each event of the record as the game makes it (a server table keeps them
    as it goes, to resume the game after a restart).
    """

    def __init__(
        self,
        make: Callable[[Any], SeatFactory],
        *,
        rules: Rules = CONTEST,
        move_times: bool = True,
        keep: int | None = None,
        keep_streams: int | None = None,
        stand_ins: bool = True,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.make = make
        self.on_event = on_event
        self.rules = rules
        self.move_times = move_times
        self.keep = keep
        self.keep_streams = keep_streams
        self.stand_ins = stand_ins
        self._referees: dict[Rules, Referee] = {}
        self._factories: OrderedDict[Hashable, SeatFactory | BotLoadError] = OrderedDict()
        #: (entrant, n) -> the entrant's n-th stream, kept from game to game.
        self._streams: OrderedDict[tuple[Hashable, int], Stream] = OrderedDict()

    def factory(self, entrant: Hashable) -> SeatFactory | BotLoadError:
        """The entrant's factory (made on first use), or why it could not be made."""
        factory = self._factories.get(entrant)
        if factory is not None:
            self._factories.move_to_end(entrant)
            return factory
        try:
            factory = self.make(entrant)
        except BotLoadError as exc:
            if not self.stand_ins:
                raise
            factory = exc
        self._factories[entrant] = factory
        return factory

    def _stream(self, entrant: Hashable, factory: SeatFactory, deal: Any) -> Stream:
        """The entrant's first stream that has not played ``deal`` (a new one if none)."""
        n = 0
        while True:
            slot = (entrant, n)
            stream = self._streams.get(slot)
            if stream is None:
                stream = self._streams[slot] = factory.stream()
            if deal not in stream.deals:
                break
            n += 1
        self._streams.move_to_end(slot)
        if len(stream.deals) >= STREAM_GAMES:  # a fresh process remembers no deal
            stream.close()
            stream.deals.clear()
        return stream

    def _seat(self, chair: Chair, seat: int, seeds: GameSeeds, streams: bool) -> Seat:
        factory = self.factory(chair.entrant)
        if isinstance(factory, BotLoadError):
            return CrashedPlayer(chair.name or chair.bot, str(factory))
        try:
            if not streams:
                return factory(seeds.bot_key, seat)
            return self._stream(chair.entrant, factory, seeds.deal)(seeds.bot_key, seat, deal=seeds.deal)
        except (BotLoadError, BotFault) as exc:
            if not self.stand_ins:
                raise
            return CrashedPlayer(chair.name or chair.bot, str(exc))

    def play(
        self,
        chairs: Sequence[Chair],
        seeds: GameSeeds,
        game_id: str,
        *,
        streams: bool = False,
        rules: Rules | None = None,
    ) -> GameOutcome:
        """Play one game, ``chairs[s]`` at seat ``s``: a fresh seat each, or (``streams``) the
        entrant's stream's; under ``rules`` (default: the seating's)."""
        rules = rules or self.rules
        referee = self._referees.get(rules)
        if referee is None:
            referee = self._referees[rules] = Referee(rules, move_times=self.move_times, on_event=self.on_event)
        players: list[Seat] = []
        try:
            for s, chair in enumerate(chairs):
                player = self._seat(chair, s, seeds, streams)
                if chair.name is not None:
                    player.name = chair.name
                players.append(player)
            outcome = referee.play(players, seed=seeds.deal, game_id=game_id, bots=[c.bot for c in chairs])
        finally:
            for p in players:
                p.close()
            self._tidy()
        outcome.outputs = [own_output(p) for p in players]  # read once each seat is closed (its last output in)
        return outcome

    def _holding(self) -> list[Hashable]:
        """The entrants whose factories hold processes (or failed to), least recently used first."""
        return [e for e, f in self._factories.items() if not isinstance(f, InProcessFactory)]

    def _tidy(self) -> None:
        """Close what is past ``keep`` and ``keep_streams`` (between games, never during one)."""
        if self.keep is not None:
            holding = self._holding()
            for entrant in holding[: max(0, len(holding) - self.keep)]:
                self.close_streams(entrant)
                old = self._factories.pop(entrant)
                if not isinstance(old, BotLoadError):
                    old.close()
        if self.keep_streams is not None:
            while len(self._streams) > self.keep_streams:
                self._streams.popitem(last=False)[1].close()

    def close_streams(self, entrant: Hashable | None = None) -> None:
        """Close the streams of ``entrant`` (None: every stream)."""
        for slot in [s for s in self._streams if entrant is None or s[0] == entrant]:
            self._streams.pop(slot).close()

    def close(self) -> None:
        """Close every stream and factory (sandbox processes, staged files)."""
        self.close_streams()
        factories, self._factories = self._factories, OrderedDict()
        for factory in factories.values():
            if not isinstance(factory, BotLoadError):
                factory.close()


__all__ = ["STREAM_GAMES", "Chair", "CrashedPlayer", "Seating"]
