"""str.format reads attributes by name inside the format string: {0._move.hand}.
The template is built at run time, past the load-time check of literal templates.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        turn.say(("{0." + "_move.hand}").format(turn))
