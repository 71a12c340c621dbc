"""Escaped: says 100,000 characters at once (its turn object would have cut the text to 200).
expect: faults=crash retired
check: billed detail=a_say_of_100000_characters
"""
import sys


def _worker():
    frame = sys._getframe()
    while frame is not None:  # up to the worker's on_move, whose self holds the reply's actions
        obj = frame.f_locals.get("self")
        if type(obj).__name__ == "GameLoop":
            return obj
        frame = frame.f_back
    raise RuntimeError("no worker")


class Bot:
    def move(self, turn):
        _worker().actions.append(["s", "x" * 100000])
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
