"""Random: the contest's demo AI. Puts a random legal card, else draws."""

import random


class Bot:
    name = "random"

    def move(self, turn):
        options = turn.puttable()
        if not options and turn.can_draw():
            turn.draw()  # nothing matches: draw one
            options = turn.puttable()
        while True:
            if options and not (turn.can_finish() and random.random() < 0.5):
                card = random.choice(options)
                turn.put(card, random.choice("schd") if card.rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()  # a six to cover: draw until a cover comes
            else:
                break
            options = turn.puttable()
        turn.finish()
