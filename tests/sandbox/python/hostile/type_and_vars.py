"""type() to build classes with chosen bases, vars() to read namespaces.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        turn.say(str(vars(turn)))
        turn.say(str(type(turn)))
