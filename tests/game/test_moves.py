"""The fast answers of Move (can_draw, can_finish) agree with the reasons it gives (R4.4-R4.5, R5, R7.2)."""

import random

from arena.game.engine import Game
from arena.game.fallback import fallback_move


def test_fast_answers_agree_with_refusals_over_random_games() -> None:
    rng = random.Random(5)
    checked = 0
    for n in range(2, 7):
        for seed in range(6):
            game = Game(n, seed=seed)
            game.start_round()
            while not game.over:
                move = game.move
                # probe the move before and after each action the fallback takes
                for _ in range(3):
                    assert move.can_draw() == (move.draw_refusal() is None)
                    assert move.can_finish() == (move.finish_refusal() is None)
                    checked += 1
                    if move.finished:
                        break
                    if move.can_draw() and rng.random() < 0.3:
                        game.draw()
                    elif move.puttable() and rng.random() < 0.7:
                        game.put(rng.choice(move.puttable()))
                    else:
                        break
                if not move.finished:
                    fallback_move(game, rng)
                assert move.can_draw() is False and move.can_finish() is False
                if not game.in_round and not game.over:
                    game.start_round()
    assert checked > 1000
