"""Random: the contest's demo AI. Puts a random legal card, else draws."""

import random


class Bot:
    name = "random"

    def move(self, turn):
        options = turn.puttable()
        if not options and turn.can_draw():
            turn.draw()
            options = turn.puttable()
        while options:
            card = random.choice(options)
            suit = random.choice("schd") if card.rank == "j" else None
            turn.put(card, suit)
            if turn.can_finish() and random.random() < 0.5:
                break
            options = turn.puttable()
            while not options and not turn.can_finish() and turn.can_draw():
                turn.draw()
                options = turn.puttable()
        turn.finish()
