"""What a bot sees and does on its move: the ``turn`` of docs/bot-api.md.

A :class:`Turn` is built for one seat from a :class:`Table` (the seat's view
of the game, R10) and the :class:`~arena.game.moves.Move` in progress. It hands
out only copies and read-only values; hidden cards never reach it. The same
class serves a bot in the referee's process (the table is the engine's
adapter) and a bot in a sandbox worker (the table is plain data plus a pipe
to the referee), so bots cannot tell the two apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

from ..errors import IllegalMove
from ..game.cards import Card, to_card, to_suit
from ..game.moves import Move
from ..game.rules import Rules
from ..game.visibility import is_public, private_key, public_data

#: ``turn.say``: characters kept of one line, and lines a move (more are dropped). The one place
#: these caps live: the sandboxed seat's player refuses a worker that sends past them.
SAY_CHARS = 200
SAYS_PER_MOVE = 20


class PlayerInfo(NamedTuple):
    """One seat as everyone sees it (R10) [``getPlayers()``]."""

    seat: int
    name: str
    cards: int
    score: int
    skips: int


class Table(Protocol):
    """The seat's view of the game, and the way its actions reach the referee."""

    rules: Rules

    def players(self) -> tuple[PlayerInfo, ...]: ...
    def pile(self) -> tuple[Card, ...]: ...
    def history(self) -> tuple[Mapping[str, Any], ...]: ...
    def act_put(self, card: Card, suit: str | None) -> None: ...
    def act_draw(self) -> Card: ...
    def act_finish(self) -> None: ...
    def act_say(self, text: str) -> None: ...


class Turn:
    """One move of one seat. See docs/bot-api.md for every name.

    ``puttable()`` lists the cards you may put now (empty when none)
    [``hasPuttable()``]; ``can_draw()`` says whether you may draw now
    [``canGetCard``]; ``can_finish()`` whether the move may end now
    [``canFinishMove``]. They are the move's own checks (arena.game.moves.Move).
    """

    __slots__ = ("_move", "_table", "_said", "puttable", "can_draw", "can_finish")

    def __init__(self, move: Move, table: Table) -> None:
        self._move = move
        self._table = table
        self._said = 0
        # The move's own checks, bound directly: these are the hot calls.
        self.puttable = move.puttable
        self.can_draw = move.can_draw
        self.can_finish = move.can_finish

    # -- what the move can see -------------------------------------------
    @property
    def first(self) -> bool:
        """True on the round's first move: the opening card was put for you."""
        return self._move.first

    @property
    def seat(self) -> int:
        """Your seat number."""
        return self._move.seat

    @property
    def hand(self) -> tuple[Card, ...]:
        """Your cards."""
        return tuple(self._move.hand)

    @property
    def top(self) -> Card:
        """The top card of the pile [``lastCard()``]."""
        return self._move.top

    @property
    def suit(self) -> str:
        """The suit to follow (ordered by a jack, or the top's suit)."""
        return self._move.suit

    @property
    def pile(self) -> tuple[Card, ...]:
        """Every card put this round, oldest first."""
        return self._table.pile()

    @property
    def put_this_move(self) -> tuple[Card, ...]:
        """Cards put so far in this move (the opening card on a first move). An extension."""
        return tuple(self._move.put)

    @property
    def stock(self) -> int:
        """Number of cards in the stock."""
        return self._move.stock

    @property
    def players(self) -> tuple[PlayerInfo, ...]:
        """Per seat: ``seat``, ``name``, ``cards``, ``score``, ``skips`` [``getPlayers()``]."""
        return self._table.players()

    @property
    def history(self) -> tuple[Mapping[str, Any], ...]:
        """The public events of this game so far, oldest first (read-only mappings)."""
        return self._table.history()

    @property
    def rules(self) -> Rules:
        """The rules in force (frozen)."""
        return self._table.rules

    # -- what the move can do ---------------------------------------------
    def can_put(self, card: Any) -> bool:
        """Whether ``card`` (a Card or its text) may be put now [``canPutCard``]."""
        try:
            card = to_card(card)
        except IllegalMove:
            return False
        return card in self._move.hand and self._move.allowed(card)

    def put(self, card: Any, suit: Any = None) -> None:
        """Put ``card``; for a jack, ``suit`` is the suit it orders (default its own).

        :raises IllegalMove: not allowed now (the rule is named); nothing changes.
        """
        if type(card) is not Card:
            card = to_card(card)
        ordered = to_suit(suit) if card.rank == "j" else None
        self._move.check_put(card, ordered)
        self._table.act_put(card, ordered)

    def draw(self) -> Card:
        """Draw a card and get it [``getCard``].

        :raises IllegalMove: no draw is allowed now (R4.4, R5.3, R7.2).
        """
        if not self._move.can_draw():
            self._move.check_draw()  # raises, naming the rule
        return self._table.act_draw()

    def finish(self) -> None:
        """End the move [``finishMove``].

        :raises IllegalMove: the move may not end yet (R4.5, R5.1).
        """
        if not self._move.can_finish():
            self._move.check_finish()  # raises, naming the rule
        self._table.act_finish()

    @property
    def finished(self) -> bool:
        """Whether this move has ended. An extension."""
        return self._move.finished

    def points(self) -> int:
        """Penalty points of your hand under the rules in force [``sumCards``]."""
        table = self._table.rules.points
        return sum(table[c.rank] for c in self._move.hand)

    def say(self, text: Any) -> None:
        """A short message for the game log [``message``]; at most :data:`SAY_CHARS` characters,
        :data:`SAYS_PER_MOVE` a move."""
        if self._said >= SAYS_PER_MOVE:
            return
        self._said += 1
        self._table.act_say(str(text)[:SAY_CHARS] if type(text) is str else repr(text)[:SAY_CHARS])

    def __repr__(self) -> str:
        return f"<Turn seat={self.seat} top={self.top} suit={self.suit} hand={' '.join(map(str, self.hand))}>"


def public_event(event: Mapping[str, Any]) -> Mapping[str, Any]:
    """The part of a record event everyone may see (R10, :func:`arena.game.visibility.public_data`),
    read-only all the way down."""
    frozen: Mapping[str, Any] = freeze(public_data(event))
    return frozen


class PublicFeed:
    """The public part of one game's log (R10), built once, incrementally, and shared by its seats.

    The one feed of the engine's log as public events (R10, decided by
    :mod:`arena.game.visibility`): plain data
    (:attr:`data`, what a sandboxed seat is sent) and, made from it on first
    demand, read-only mappings (what ``turn.history`` hands an in-process bot).
    """

    __slots__ = ("data", "frozen", "seen")

    def __init__(self) -> None:
        self.data: list[dict[str, Any]] = []
        self.frozen: list[Mapping[str, Any]] = []
        self.seen = 0

    def pull(self, log: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The public events of ``log`` (which only grows) as plain data, oldest first; do not change them."""
        if self.seen < len(log):
            data = self.data
            for e in log[self.seen :]:
                if is_public(e):
                    data.append(public_data(e))
            self.seen = len(log)
        return self.data

    def data_since(self, log: Sequence[Mapping[str, Any]], mark: int) -> list[dict[str, Any]]:
        """The public events of ``log`` from index ``mark`` on, as plain data."""
        return self.pull(log)[mark:]

    def update(self, log: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
        """The public events of ``log``, oldest first, as read-only mappings."""
        data = self.pull(log)
        frozen = self.frozen
        if len(frozen) < len(data):
            frozen.extend(freeze(e) for e in data[len(frozen) :])
        return tuple(frozen)


def freeze(value: Any) -> Any:
    """A read-only deep copy for bots: dicts become mapping proxies without ``_`` keys, lists tuples.

    Every read-only mapping a bot gets is made here (or is ``Rules.points``, keyed by
    ranks), so no method of it (``get``, ``keys``, ``items``, ``copy``, ``|``, ``dict()``,
    ``repr``...) can show a ``_`` key: there is none to show."""
    if isinstance(value, dict):
        return MappingProxyType(
            {k: freeze(v) for k, v in value.items() if (k[:1] != "_" if type(k) is str else not private_key(k))}
        )
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def public_history(log: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    """Every public event of ``log``."""
    return tuple(public_event(e) for e in log if is_public(e))
