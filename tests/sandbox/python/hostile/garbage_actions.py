"""Passes garbage to put (numbers, lists, None, bytes-like text) and an invalid suit.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        for junk in (42, None, ["10h"], {"card": "10h"}, 3.5):
            try:
                turn.put(junk)
            except Exception:
                pass
        turn.put(turn.hand[0], suit=["s"])
        turn.put("not a card")
