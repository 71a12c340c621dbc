"""Random: the contest's demo AI. Puts a random legal card, else draws."""

import random


class Bot:
    name = "random"

    def move(self, turn):
        if not turn.puttable() and turn.can_draw():
            turn.draw()                      # nothing matches: draw one
        while True:
            options = turn.puttable()
            if options and not (turn.can_finish() and random.random() < 0.5):
                card = random.choice(options)
                turn.put(card, random.choice("schd") if card.rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()                  # a six to cover: draw until a cover comes
            else:
                break
        turn.finish()
