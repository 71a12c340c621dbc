"""An attribute walk hidden in a nested format spec of a plain str: "{0:{1._move}}".
expect: faults=exception retired
check: no-leak
"""


class Bot:
    def move(self, turn):
        turn.say("LEAK " + "{0:{1._move.hand}}".format("x", turn))
