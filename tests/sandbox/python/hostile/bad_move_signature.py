"""move takes no turn.
expect: load
"""


class Bot:
    def move(self):
        pass
