"""str.format reads attributes by name inside the format string: {0._move.hand}.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        turn.say("{0._move.hand}".format(turn))
