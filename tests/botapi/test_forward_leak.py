"""The forward model cannot leak (issue 22): a sample is a function of the seat's view and its random.

Two games share one public history and the seat's hand but hide different cards
(the cards the seat never saw, permuted); the seat's samples are the same for the
same seed. Were the sampler to read anything hidden, the permutation would show.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from arena.botapi.forward import sample_world
from arena.botapi.rollout import heuristic
from arena.botapi.turn import PublicFeed, Turn
from arena.errors import IllegalMove
from arena.game.engine import Game
from arena.game.referee import EngineTable


def record_actions(n: int, seed: int, moves: int) -> tuple[Game, list[tuple[Any, ...]]]:
    """A heuristic game's first round up to a move of seat 0 after ``moves`` moves, and its actions."""
    game = Game(n, seed=seed)
    game.start_round()
    while game.moves < moves or game.mover != 0:
        if not game.in_round:
            raise LookupError("the round ended first")
        heuristic(game, game.rng)
    actions = [
        (e["event"], e.get("card"), e.get("suit"))
        for e in game.log
        if e["event"] in ("put", "draw", "finish") and not e.get("opening")
    ]
    return game, actions


def replay(n: int, seed: int, actions: list[tuple[Any, ...]], swap: dict[str, str]) -> Game:
    """The same game with the cards of ``swap`` exchanged in the deal, the same actions replayed."""
    game = Game(n, seed=seed)
    game.start_round()
    from arena.game.cards import Card

    def moved(c: Card) -> Card:
        return Card(swap.get(str(c), str(c)))

    for hand in game.hands:
        hand[:] = [moved(c) for c in hand]
    game.stock[:] = [moved(c) for c in game.stock]
    for kind, card, suit in actions:
        if kind == "put":
            game.put(card, suit)
        elif kind == "draw":
            game.draw()
        else:
            game.finish()
    return game


def turn_of(game: Game) -> Turn:
    return Turn(game.move, EngineTable(game, game.mover, [f"p{s}" for s in range(game.n)], PublicFeed()))


def public(game: Game) -> Any:
    return turn_of(game).history


def twins(trials: int, seed: int, sizes: int = 4) -> Iterator[tuple[int, int, Game, Game]]:
    """(trial, n, game, other): a heuristic game's position of seat 0 and the same position
    with the cards seat 0 never saw permuted in the deal, one public history for both."""
    rng = random.Random(seed)
    for trial in range(trials):
        n = 2 + trial % sizes
        try:
            game, actions = record_actions(n, trial, moves=3 + trial % 9)
        except LookupError:
            continue
        seen = {str(c) for c in game.hands[0]} | {str(c) for c in game.round_pile}
        hidden = sorted(({str(c) for h in game.hands for c in h} | {str(c) for c in game.stock}) - seen)
        if len(hidden) < 2:
            continue
        shuffled = hidden[:]
        rng.shuffle(shuffled)
        try:
            other = replay(n, trial, actions, dict(zip(hidden, shuffled, strict=True)))
        except IllegalMove:
            continue  # this permutation makes a recorded action illegal (a cover held): another trial
        if not other.in_round or other.mover != game.mover or public(game) != public(other):
            continue  # the permutation changed what everyone saw: not the same view
        assert [sorted(map(str, h)) for h in game.hands] != [sorted(map(str, h)) for h in other.hands] or (
            game.stock != other.stock
        )
        yield trial, n, game, other


def test_two_hidden_deals_with_one_public_history_give_the_same_samples() -> None:
    compared = 0
    for _trial, n, game, other in twins(40, 22):
        same, diff = turn_of(game), turn_of(other)
        assert public(game) == public(other) and same.hand == diff.hand and same.pile == diff.pile
        for seed in (1, 2):
            a, b = sample_world(same, random.Random(seed)), sample_world(diff, random.Random(seed))
            assert [a.hand(s) for s in range(n)] == [b.hand(s) for s in range(n)]
            assert a.stock_cards() == b.stock_cards()
            a.playout("heuristic", until="game")
            b.playout("heuristic", until="game")
            assert a.scores() == b.scores()
        compared += 1
    assert compared >= 12
