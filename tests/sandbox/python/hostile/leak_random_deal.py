"""Reseeds and drains its random module, and tries random.Random with guessed seeds,
hoping to predict or steer the deal. The deal must not change.
expect: clean
check: same-deals
"""
import random


class Bot:
    def move(self, turn):
        random.seed(0)
        random.shuffle(list(range(36)))
        for guess in range(20):
            rng = random.Random(guess)
            rng.random()
        random.getrandbits(64)
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(random.choice(options))
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
