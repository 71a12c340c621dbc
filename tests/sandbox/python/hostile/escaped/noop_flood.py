"""Escaped: plays legally, and pads every reply with 25,000 no-op actions (empty printed texts):
before the turn bounds, 17 ms of referee CPU a move (374x an honest one), unbilled and never faulted.
expect: faults=crash retired
check: billed detail=actions_in_a_turn
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
        _worker().actions.extend(["o", ""] for _ in range(25000))
