"""Escaped: plays legally, and pads every reply with printed text just under every bound of a
turn (500 texts, 240 KB) though the game keeps 4096 characters in all: the text past what the
worker itself would keep is refused.
expect: faults=crash retired
check: billed detail=output_past_the_game's_limit
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
        _worker().actions.extend(["o", "flood" + "x" * 470] for _ in range(500))
