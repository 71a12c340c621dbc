"""Built-in playout policies of the forward model (docs/bot-api.md, "Searching ahead").

A policy plays the whole move of ``game.mover`` on a game of the forward model
(:mod:`arena.botapi.forward`), as trusted code: a playout with a built-in policy never
calls bot code, so it runs at the same speed in-process and in the sandbox.

``heuristic`` is ``bots/heuristic.py`` written against the engine's state: the same
decisions, card for card, without a ``turn`` in between (tests/botapi/test_forward.py::
test_the_heuristic_playout_policy_is_bots_heuristic_card_for_card plays whole games both ways
and compares the records). ``random`` is the
referee's fallback: a random legal card, else a draw; cover sixes; finish.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..game.cards import DECK, RANKS, SUITS, Card
from ..game.engine import Game
from ..game.fallback import fallback_move
from ..game.moves import Move

Policy = Callable[[Game, random.Random], None]

#: The heuristic's suit order ("schd"): ties go to the first.
_ORDER = SUITS


def _order_from(hand: list[Card], plan: list[Card]) -> str:
    """The suit held most after ``plan`` (jacks aside, points as a tie-break), as the heuristic orders."""
    counts = dict.fromkeys(_ORDER, 0.0)
    for card in hand:
        if card.rank != "j" and card not in plan:
            counts[card.suit] += 1 + card.points / 20
    return max(_ORDER, key=counts.__getitem__)


def _plans(hand: list[Card], first: Card) -> list[list[Card]]:
    """Candidate put sequences starting with ``first`` (same-rank runs, six covers)."""
    same = [c for c in hand if c.rank == first.rank and c is not first]
    runs = [[first]]
    for last in same:
        runs.append([first] + [c for c in same if c is not last] + [last])
    if first.rank != "6":
        return runs
    plans = []
    for run in runs:
        rest = [c for c in hand if c not in run]
        six = run[-1]
        covers = [c for c in rest if c.rank != "6" and (c.suit == six.suit or c.rank == "j")]
        for cover in covers:
            plans.append(run + [cover] + [c for c in rest if c.rank == cover.rank and c is not cover])
        if not covers:
            plans.append(run)
    return plans


#: The cards that answer a top of each suit and rank (R4.1: a jack, the suit or the rank), as bits of ``Card.index``.
_ANSWERS: dict[tuple[str, str], int] = {
    (suit, rank): sum(1 << c.index for c in DECK if c.rank == "j" or c.suit == suit or c.rank == rank)
    for suit in SUITS
    for rank in RANKS
}


def _unseen(round_pile: list[Card], hand: list[Card]) -> tuple[int, int, int]:
    """The cards of neither the round's pile nor ``hand`` and how many, and ``hand``: as bits of ``Card.index``."""
    held = 0
    for c in hand:
        held |= 1 << c.index
    seen = held
    for c in round_pile:
        seen |= 1 << c.index
    unseen = ((1 << 36) - 1) & ~seen
    return unseen, unseen.bit_count(), held


def _value(game: Game, hand: list[Card], plan: list[Card], unseen: tuple[int, int, int]) -> float:
    """The heuristic's value of ``plan``: points shed, going out, effects on the right players."""
    n = game.n
    me = game.mover
    hands = game.hands
    left = len(hand) - len(plan)
    last = plan[-1]
    value = 0.0
    for card in plan:
        value += 4 * card.points + 3
    if left == 0 and last.rank != "6":
        return 10000 + value
    if last.rank == "6":
        value -= 40
    jacks = sum(1 for c in plan if c.rank == "j")
    if jacks:
        value -= (8 if left <= 2 else 30) * jacks
    k = 0
    for card in reversed(plan):
        if card.rank != last.rank:
            break
        k += 1
    if last.rank in ("7", "8", "a"):
        for i in range(k):
            cards = len(hands[(me + 1 + i % (n - 1)) % n])
            danger = 3.0 if cards <= 2 else (1.5 if cards <= 4 else 0.6)
            if last.rank == "7":
                value += 4 * danger
            elif last.rank == "8":
                value += (5 if n == 3 else 8) * danger
                if n == 2:
                    value += 6
            else:
                value += (4 if n > 2 else 10) * danger
        if all(len(hands[s]) > 4 for s in range(n) if s != me) and left > 2:
            value -= 4 * k
    suit = last.suit if last.rank != "j" else _order_from(hand, plan)
    rank = last.rank
    answers = (unseen[0] & _ANSWERS[suit, rank]).bit_count()
    value -= 0.4 * answers * 10 / max(unseen[1], 1)
    kept = unseen[2]
    for c in plan:
        kept &= ~(1 << c.index)
    follow = (kept & _ANSWERS[suit, rank]).bit_count()
    if left:
        value += 1.5 * min(follow, 2)
    return value


def _best_plan(game: Game, hand: list[Card], options: list[Card], drawn: bool) -> list[Card] | None:
    move = game.move
    if not options:
        return [] if (move.first or drawn) else None
    unseen = _unseen(game.round_pile, hand)
    best: list[Card] | None = None
    best_value = 0.0
    for first in options:
        for plan in _plans(hand, first):
            value = _value(game, hand, plan, unseen)
            if best is None or value > best_value:
                best, best_value = plan, value
    if move.first or drawn or move.put:
        return best
    if best_value < -20 and len(hand) > 3:
        return None
    return best


def _put(game: Game, move: Move, card: Card) -> None:
    # The engine's checked path: the unchecked one is the referee's alone (tests/test_layers.py).
    game.put(card, _order_from(list(move.hand), []) if card.rank == "j" else None)


def heuristic(game: Game, rng: random.Random) -> None:
    """Play the mover's move as ``bots/heuristic.py`` would (``rng`` unused: it is deterministic)."""
    move = game.move
    drawn = move.drew and not move.put  # a move resumed after its voluntary draw
    plan = _best_plan(game, list(move.hand), move.puttable(), drawn)
    if plan is None and move.can_draw():
        game.draw()
        plan = _best_plan(game, list(move.hand), move.puttable(), True)
    if plan:
        for card in plan:
            if card not in move.hand or not move.allowed(card):
                break
            _put(game, move, card)
    while not move.can_finish():
        covers = move.puttable()
        if covers:
            _put(game, move, min(covers, key=lambda c: (c.rank == "j", -c.points)))
        elif move.can_draw():
            game.draw()
        else:
            break
    game.finish()


def random_policy(game: Game, rng: random.Random) -> None:
    """The referee's fallback move: a random legal card, else a draw; cover sixes; finish."""
    fallback_move(game, rng)


#: The policies a playout may name.
POLICIES: dict[str, Policy] = {"heuristic": heuristic, "random": random_policy}
