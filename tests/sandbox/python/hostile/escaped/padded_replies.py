"""Escaped: plays legally, and pads every reply with 500 short printed texts (under every bound
of a turn, and each no longer than the worker's own truncation mark): bounded, so not faulted;
the referee CPU it costs is billed to its seat (taken from its bank).
expect: clean
check: output-capped
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
        _worker().actions.extend(["o", "flood"] for _ in range(500))
