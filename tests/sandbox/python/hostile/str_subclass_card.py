"""A str subclass whose __eq__ always says yes, passed as a card and as a suit.
expect: faults=exception retired
"""


class Yes(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False


class Bot:
    def move(self, turn):
        for text in ("as", "ah", "jd", "10c"):
            if not turn.can_put(Yes(text)):
                turn.put(Yes(text), suit=Yes("x"))
        turn.put(Yes("zz"))
