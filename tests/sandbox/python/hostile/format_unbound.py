"""str.format fetched unbound and passed around: map(str.format, ...), a class alias.
expect: faults=exception retired
check: no-leak
"""


class Bot:
    def move(self, turn):
        walk = getattr(str, "format")
        turn.say("LEAK " + "".join(map(walk, ["{0._move.hand}"], [turn])))
