"""Bot() raises.
expect: load
"""


class Bot:
    def __init__(self):
        raise SystemExit("not today")

    def move(self, turn):
        turn.finish()
