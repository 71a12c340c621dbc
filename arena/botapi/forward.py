"""The forward model of docs/bot-api.md ("Searching ahead"): worlds a search bot samples and plays.

``sample_world(turn, random)`` deals the cards this seat cannot see (the other
hands, the stock's order) consistently with what it knows: its hand and the
public history of the round (cards put, draws counted, suits ordered,
reshuffles, and who could not cover a six, R5.3/R5.4). It reads the ``turn``
only through the public API a bot has, and takes one number from the bot's
``random``; so a sample is a function of the seat's view and the bot's random
alone, whatever the hidden deal (tests/botapi/test_forward_leak.py).

A :class:`World` wraps a game of the engine itself (a :class:`~arena.game.engine.Game`
dealt from the sample, its deals and reshuffles from the world's own generator):
the referee's rules, not a copy. Bot code sees only its public methods, which
return plain data, cards and new worlds; its state is in ``_`` slots that bot code
cannot name (docs/security/forward-model.md, "The forward model"). Built-in playout policies
(:mod:`arena.botapi.rollout`) run as trusted code; a bot's own policy gets a ``turn`` over
the world, the same class as the referee's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ..errors import IllegalMove
from ..game.cards import Card, to_card
from ..game.engine import Game, place_seats
from ..game.fallback import fallback_move
from ..game.moves import Move
from ..game.referee import EngineTable
from .knowledge import ALL, Facts, assign
from .rollout import POLICIES
from .turn import PublicFeed, Turn

__all__ = ["PLAYOUT_MOVES", "World", "sample_world", "sampler"]

#: A playout's default bound: moves played before it stops with the round unfinished.
PLAYOUT_MOVES = 1000


class _NextSeed:
    """A game's round key for a world: the next deal's seed comes from the world's generator."""

    __slots__ = ("rng",)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def derive(self, *parts: Any) -> int:
        return self.rng.getrandbits(64)


def _blank(facts_rules: Any, n: int, rng: random.Random) -> Game:
    """A :class:`Game` made without its ``__init__`` (which keys a hash by the deal seed)."""
    g = Game.__new__(Game)
    g.n = n
    g.rules = facts_rules
    g.seed = None
    g.over = False
    g.result = None
    g.log = []
    g.on_event = None
    g._emit = g.log.append  # type: ignore[assignment]
    g.rng = rng
    g._round_key = _NextSeed(rng)  # type: ignore[assignment]
    g.round_results = []
    g.text_left = [0] * (2 * n)  # a policy's say lines are dropped
    return g


def sampler(turn: Any) -> Callable[..., World]:
    """``sample(random, likely=True)``: :func:`sample_world` for this ``turn``, its history
    parsed once (a search samples many worlds a move)."""
    facts = Facts(turn)

    def sample(rng: Any, likely: bool = True) -> World:
        return _sample(facts, rng, likely)

    return sample


def sample_world(turn: Any, rng: Any, likely: bool = True) -> World:
    """A world consistent with what ``turn``'s seat knows, dealt from ``rng`` (the bot's ``random``).

    With ``likely`` (the default) a seat that drew instead of putting (R4.4) is taken to
    have held no matching card then, when the rest of the facts allow it.
    """
    return _sample(Facts(turn), rng, likely)


def _sample(f: Facts, bot_random: Any, likely: bool) -> World:
    seed = bot_random.getrandbits(64)
    if type(seed) is not int:
        raise TypeError("sample_world needs the bot's random (its getrandbits gave no int)")
    rng = _random_from(seed)
    owners: list[int] = []
    hard: list[int] = []
    soft: list[int] = []
    for s, seat_slots in enumerate(f.slots):
        for h, sf in seat_slots:
            owners.append(s)
            hard.append(h)
            soft.append(sf)
    for _ in range(f.stock):
        owners.append(-1)
        hard.append(f.stock_mask)
        soft.append(f.stock_mask)
    cards = assign(soft, f.pool, rng) if likely else None
    if cards is None:
        cards = assign(hard, f.pool, rng)
    if cards is None:
        cards = assign([ALL] * len(hard), f.pool, rng)
    assert cards is not None
    g = _blank(f.rules, f.n, rng)
    hands: list[list[Card]] = [[] for _ in range(f.n)]
    hands[f.seat] = list(f.hand)
    stock: list[Card] = []
    for owner, card in zip(owners, cards, strict=True):
        (stock if owner < 0 else hands[owner]).append(card)
    g.hands = hands
    g.stock = stock  # drawn from the end: a random order already
    g.pile = list(f.pile)
    g.round_pile = list(f.round_pile)
    g.scores = list(f.scores)
    g.skips = list(f.skips)
    g.drawn = list(f.drawn)
    g.round = f.round
    g.in_round = True
    g.mover = f.seat
    g.moves = f.moves
    g.last_winner = f.last_winner
    g.move = Move(f.seat, hands[f.seat], f.top, f.suit, list(f.put), len(stock), len(g.pile), f.first)
    g.move.drew = f.drew
    return World(g, f.seat, f.names)


def _random_from(seed: int) -> random.Random:
    rng = random.Random(0)
    rng.seed(seed)
    return rng


def _copy_game(g: Game) -> Game:
    rng = random.Random(0)
    rng.setstate(g.rng.getstate())
    c = _blank(g.rules, g.n, rng)
    c.over = g.over
    c.hands = [list(h) for h in g.hands]
    c.stock = list(g.stock)
    c.pile = list(g.pile)
    c.round_pile = list(g.round_pile)
    c.scores = list(g.scores)
    c.skips = list(g.skips)
    c.drawn = list(g.drawn)
    c.round = g.round
    c.in_round = g.in_round
    c.mover = g.mover
    c.moves = g.moves
    c.last_winner = g.last_winner
    c.round_results = list(g.round_results)
    m = g.move
    move = Move(m.seat, c.hands[m.seat], m.top, m.suit, list(m.put), m.stock, m.pile_size, m.first)
    move.drew, move.finished = m.drew, m.finished
    c.move = move
    return c


PolicyArg = Any


class World:
    """One sampled world: a game of the engine, seen and moved through public methods only.

    Every method returns plain data (ints, tuples, strings), cards or a new world; none
    hands out the world's own lists or its game.
    """

    __slots__ = ("_g", "_seat", "_names", "_feed")

    def __init__(self, game: Game, seat: int, names: tuple[str, ...]) -> None:
        self._g = game
        self._seat = seat
        self._names = names
        self._feed: PublicFeed | None = None

    def __repr__(self) -> str:
        g = self._g
        return f"<World seat={self._seat} mover={g.mover} round={g.round} top={g.move.top} stock={len(g.stock)}>"

    # -- what the world shows ------------------------------------------------------
    @property
    def seat(self) -> int:
        """The seat this world was sampled for."""
        return self._seat

    @property
    def players(self) -> int:
        """The number of seats."""
        return self._g.n

    @property
    def mover(self) -> int:
        """The seat whose move is in progress (or who moved last, between rounds)."""
        return self._g.mover

    @property
    def in_round(self) -> bool:
        """Whether a round is in progress (False after a round ended, until :meth:`deal`)."""
        return self._g.in_round

    @property
    def over(self) -> bool:
        """Whether the game is over (R2.3, R2.4)."""
        return self._g.over

    @property
    def round(self) -> int:
        return self._g.round

    @property
    def top(self) -> Card:
        return self._g.move.top

    @property
    def suit(self) -> str:
        return self._g.move.suit

    @property
    def stock(self) -> int:
        """How many cards the stock holds."""
        return len(self._g.stock)

    def stock_cards(self) -> tuple[Card, ...]:
        """The stock in this world, the next card to draw first."""
        return tuple(reversed(self._g.stock))

    def hand(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` holds in this world."""
        return tuple(self._g.hands[_seat_of(self._g, seat)])

    def cards(self) -> tuple[int, ...]:
        """How many cards each seat holds."""
        return tuple(len(h) for h in self._g.hands)

    def scores(self) -> tuple[int, ...]:
        """Each seat's score (after the last round's burns)."""
        return tuple(self._g.scores)

    def points(self) -> tuple[int, ...]:
        """Each seat's hand points under the rules in force (R8.2): after a round, what it scored."""
        g = self._g
        return tuple(g.hand_points(s) for s in range(g.n))

    def places(self) -> tuple[int, ...]:
        """Places by score as R9.1 would give them now (1 is best)."""
        return place_seats(self._g.scores, teams=self._g.rules.teams)

    # -- what the mover may do -----------------------------------------------------
    def puttable(self) -> list[Card]:
        """The mover's cards that may be put now (a fresh list)."""
        return self._g.move.puttable() if self._g.in_round else []

    def can_draw(self) -> bool:
        return self._g.in_round and self._g.move.can_draw()

    def can_finish(self) -> bool:
        return self._g.in_round and self._g.move.can_finish()

    def actions(self) -> list[tuple[Any, ...]]:
        """Every legal action now: ``("put", card, suit)`` (each suit for a jack, else None),
        ``("draw",)``, ``("finish",)``."""
        out: list[tuple[Any, ...]] = []
        for c in self.puttable():
            if c.rank == "j":
                out += [("put", c, s) for s in ("s", "c", "h", "d")]
            else:
                out.append(("put", c, None))
        if self.can_draw():
            out.append(("draw",))
        if self.can_finish():
            out.append(("finish",))
        return out

    # -- acting (the engine's checked path: IllegalMove as for a turn) --------------
    def put(self, card: Any, suit: Any = None) -> None:
        """The mover puts ``card`` (a jack orders ``suit``)."""
        self._g.put(to_card(card), suit)

    def draw(self) -> Card:
        """The mover draws; returns the card (this world's stock is known)."""
        return self._g.draw()

    def finish(self) -> None:
        """Finish the move: effects, then the next mover or the round's end."""
        self._g.finish()

    def apply(self, action: Any) -> Card | None:
        """Do one action of :meth:`actions`; a draw returns the card."""
        kind = action[0] if isinstance(action, tuple) and action else action
        if kind == "put":
            self.put(action[1], action[2] if len(action) > 2 else None)
        elif kind == "draw":
            return self.draw()
        elif kind == "finish":
            self.finish()
        else:
            raise IllegalMove("R4.6", f"not an action: {action!r:.40}")
        return None

    def deal(self) -> None:
        """Deal the next round (R3) after a round ended, from this world's generator."""
        if self._g.in_round or self._g.over:
            raise IllegalMove("R8.1", "a round is in progress" if self._g.in_round else "the game is over")
        self._g.start_round()

    def clone(self) -> World:
        """An independent copy: the same cards, the same order, the same generator state."""
        return World(_copy_game(self._g), self._seat, self._names)

    def turn(self) -> Turn:
        """The mover's ``turn`` in this world: the class a bot's ``move`` gets, acting on this world."""
        g = self._g
        if not g.in_round:
            raise IllegalMove("R8.1", "the round is over")
        if self._feed is None or self._feed.seen > len(g.log):
            self._feed = PublicFeed()
        return Turn(g.move, EngineTable(g, g.mover, self._names, self._feed))

    # -- playing on ---------------------------------------------------------------
    def play_move(self, policy: PolicyArg = "heuristic") -> None:
        """Play the rest of the mover's move with ``policy`` (see :meth:`playout`)."""
        g = self._g
        if not g.in_round:
            raise IllegalMove("R8.1", "the round is over")
        self._policy(policy, g.mover)(g, g.rng)

    def playout(self, policy: PolicyArg = "heuristic", until: str = "round", max_moves: int = PLAYOUT_MOVES) -> int:
        """Play on to the end of the round (``until="round"``) or of the game (``"game"``),
        at most ``max_moves`` moves; returns the moves played. ``policy``: a built-in name
        (``"heuristic"``, ``"random"``), a function ``policy(turn)`` that plays a move like a
        bot's ``move``, or a list of either, one per seat."""
        if until not in ("round", "game"):
            raise ValueError('until is "round" or "game"')
        g = self._g
        chosen = [self._policy(policy, s) for s in range(g.n)]
        played = 0
        limit = int(max_moves)
        while played < limit:
            if not g.in_round:
                if until == "round" or g.over:
                    break
                g.start_round()
            chosen[g.mover](g, g.rng)
            played += 1
        return played

    def _policy(self, policy: PolicyArg, seat: int) -> Callable[[Game, random.Random], None]:
        if isinstance(policy, (list, tuple)):
            if len(policy) != self._g.n:
                raise ValueError("one policy per seat")
            policy = policy[seat]
        if type(policy) is str:
            found = POLICIES.get(policy)
            if found is None:
                raise ValueError(f"no playout policy {policy!r:.40}; built in: {', '.join(POLICIES)}")
            return found
        if callable(policy):
            return self._bot_policy(policy)
        raise TypeError("a policy is a built-in name or a function of a turn")

    def _bot_policy(self, policy: Callable[[Turn], Any]) -> Callable[[Game, random.Random], None]:
        def play(g: Game, rng: random.Random) -> None:
            move = g.move
            policy(self.turn())
            if g.move is move and not move.finished:  # what the policy left: the fallback completes it
                fallback_move(g, rng)

        return play


def _seat_of(g: Game, seat: Any) -> int:
    if type(seat) is not int or not 0 <= seat < g.n:
        raise ValueError(f"no seat {seat!r:.20}")
    return seat
