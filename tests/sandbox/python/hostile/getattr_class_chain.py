"""getattr chain with computed dunder names: __class__, __base__, __subclasses__.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        name = "".join(["_", "_", "cla", "ss", "_", "_"])
        cls = getattr(turn, name)
        turn.say(str(cls))
