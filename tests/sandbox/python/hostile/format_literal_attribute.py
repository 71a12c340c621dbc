"""str.format reads attributes by name inside the format string: {0._move.hand}.
A literal template: checked and refused while loading.
expect: load
"""


class Bot:
    def move(self, turn):
        turn.say("{0._move.hand}".format(turn))
