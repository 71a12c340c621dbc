"""AttributeError.obj holds the object whose attribute was missing: try to fish one out.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        try:
            turn.no_such_thing
        except AttributeError as exc:
            turn.say(str(exc.obj))
