"""Positions set up in code (:class:`Position`) dealt into an engine game, and a bot
asked for its move on one, in-process, through the same :class:`~arena.botapi.turn.Turn` the referee
gives an in-process seat.

The deal is written the way the test fixture ``scripted_game`` (tests/conftest.py) writes it:
the round is started, then its hands, stock and pile replaced, and the log's deal rewritten to
match, so that the seat's ``turn.history`` tells the same story as its hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..botapi.turn import Turn
from ..game.cards import Card, cards
from ..game.engine import Game
from ..game.moves import Move
from ..game.referee import EngineTable, GameInfo
from ..game.rules import CONTEST, Rules
from ..seats.loader import load_trusted, resolve_bot

#: What a position's record calls its game.
GAME_ID = "position"


def deal_position(pos: Position) -> Game:
    """A fresh game whose round is dealt as ``pos``, ``pos.mover`` to move."""
    n = len(pos.hands)
    game = Game(n, pos.rules, 0)
    if pos.scores is not None:
        game.scores = list(pos.scores)
    game.start_round()
    hands = [list(h) for h in pos.hands]
    top = pos.pile
    game.hands = hands
    game.stock = list(reversed(pos.stock))  # the engine draws from the end
    game.pile = [*pos.below, top]
    game.round_pile = list(game.pile)
    game.mover = pos.mover
    follow = pos.suit or top.suit
    first = pos.first_move
    game.move = Move(
        pos.mover,
        hands[pos.mover],
        top,
        follow,
        put=[top] if first else [],
        stock=len(game.stock),
        pile_size=len(game.pile),
        first=first,
    )
    while game.log and game.log[-1]["event"] in ("put", "deal"):  # the shuffled deal's, replaced
        game.log.pop()
    game.log.append(
        {
            "event": "deal",
            "round": game.round,
            "first": pos.mover,
            "hands": [[str(c) for c in h] for h in hands],
            "stock": [str(top)] + [str(c) for c in pos.stock],
            "scores": list(game.scores),
        }
    )
    opener = pos.mover if first else (pos.mover - 1) % n
    event: dict[str, Any] = {"event": "put", "seat": opener, "card": str(top), "opening": True}
    if top.rank == "j":
        event["suit"] = follow
    game.log.append(event)
    return game


def _cards(spec: str | Sequence[Card | str]) -> tuple[Card, ...]:
    return tuple(cards(spec)) if isinstance(spec, str) else tuple(Card(c) for c in spec)


@dataclass(frozen=True)
class Position:
    """A table set up in code: each seat's hand, the pile's top card (``pile``, with older
    cards under it in ``below``, oldest first), the stock (top first), who is to move and, for a
    jack on top, the suit it asked for. With ``first_move`` the top card was put by the mover
    in this very move (a round's opening, R3.3); otherwise the mover starts a fresh move on it.
    Not every card of the deck needs to be somewhere; no card may be twice."""

    hands: tuple[tuple[Card, ...], ...]
    pile: Card
    stock: tuple[Card, ...] = ()
    below: tuple[Card, ...] = ()
    mover: int = 0
    suit: str | None = None
    first_move: bool = False
    scores: tuple[int, ...] | None = None
    rules: Rules = CONTEST
    names: tuple[str, ...] | None = None

    def game(self) -> Game:
        """A fresh engine :class:`~arena.game.engine.Game` dealt as this position."""
        return deal_position(self)


def position(
    *,
    hands: Sequence[str | Sequence[str]],
    pile: str,
    stock: str | Sequence[str] = (),
    below: str | Sequence[str] = (),
    mover: int = 0,
    suit: str | None = None,
    first_move: bool = False,
    scores: Sequence[int] | None = None,
    rules: Rules = CONTEST,
    names: Sequence[str] | None = None,
) -> Position:
    """A :class:`Position` from card texts: ``position(hands=["9h 7s", "kd qc"], pile="9c")``.

    :raises ValueError: a card twice, a mover who is not a seat, a table size the rules do not allow.
    """
    dealt = tuple(_cards(h) for h in hands)
    rules.check_players(len(dealt))
    if not 0 <= mover < len(dealt):
        raise ValueError(f"mover {mover}: the seats are 0 to {len(dealt) - 1}")
    if names is not None and len(names) != len(dealt):
        raise ValueError(f"{len(names)} names for {len(dealt)} seats")
    top, under, rest = Card(pile), _cards(below), _cards(stock)
    used = [c for h in dealt for c in h] + [top, *under, *rest]
    twice = sorted({str(c) for c in used if used.count(c) > 1})
    if twice:
        raise ValueError(f"cards in two places: {' '.join(twice)}")
    if scores is not None and len(scores) != len(dealt):
        raise ValueError(f"{len(scores)} scores for {len(dealt)} seats")
    return Position(
        hands=dealt,
        pile=top,
        stock=rest,
        below=under,
        mover=mover,
        suit=suit,
        first_move=first_move,
        scores=None if scores is None else tuple(scores),
        rules=rules,
        names=None if names is None else tuple(names),
    )


@dataclass(frozen=True)
class Answer:
    """What a bot did with its move: its actions in order (``put`` with the card and a jack's
    suit, ``draw`` with the card drawn, ``say``, ``finish``), as the record writes them, and
    whether it finished its move."""

    actions: tuple[Mapping[str, Any], ...]
    finished: bool


def ask(bot: Any, pos: Position, *, seed: int = 0) -> Answer:
    """Ask ``bot`` for its move at ``pos``: the ``turn`` its :meth:`move` gets is the one the
    mover's seat would see. ``bot`` is a bot object (with ``move(turn)``), a registered name
    or a bot file; it runs in this process (for your own code: use ``arena check`` to run a
    bot as a tournament does). An exception the bot raises comes out of ``ask`` as it is,
    with its traceback; an illegal action raises :class:`~arena.errors.IllegalMove`."""
    game = deal_position(pos)
    n = len(pos.hands)
    names = pos.names or tuple(f"seat{s}" for s in range(n))
    player: Any = bot
    if isinstance(bot, str):
        player = load_trusted(resolve_bot(bot))(seed, pos.mover)
    start = getattr(player, "start_game", None)
    if start is not None:
        start(GameInfo(pos.mover, names, pos.rules, GAME_ID))
    mark = len(game.log)
    move = game.move
    player.move(Turn(move, EngineTable(game, pos.mover, names)))
    actions = tuple(
        {k: v for k, v in e.items() if k != "seat"}
        for e in game.log[mark:]
        if e.get("seat") == pos.mover and e["event"] in ("put", "draw", "say", "finish") and not e.get("opening")
    )
    return Answer(actions, bool(move.finished))
