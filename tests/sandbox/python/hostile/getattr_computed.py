"""getattr with a computed "_" name to get the engine's move behind the turn.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        hidden = getattr(turn, "_" + "move")
        turn.say(str(hidden.hand))
