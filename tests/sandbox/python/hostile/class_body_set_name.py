"""A class body holding another class's property makes type() call its __set_name__, which
renames that shared object (Card.symbol's errors would name "forged"). Each must be refused.
Says "MUTATED <what>" for each class that was made.
expect: clean
check: no-mutation
"""
from arena import Card


class Bot:
    def move(self, turn):
        for value in (Card.symbol, property(Card.symbol.fget)):
            try:
                class Forged:
                    forged = value
            except Exception:
                continue
            turn.say("MUTATED set_name " + str(value))
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
