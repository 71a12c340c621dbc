"""An f-string is code too: f"{turn._move}".
expect: load
"""


class Bot:
    def move(self, turn):
        turn.say(f"{turn._move.hand}")
