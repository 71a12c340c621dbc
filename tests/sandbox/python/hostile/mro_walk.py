"""Card.mro() gives object; from there the subclasses. mro is refused at run time.
expect: faults=exception retired
"""
from arena import Card


class Bot:
    def move(self, turn):
        base = Card.mro()[-1]
        turn.say(str(base))
