"""Escaped: spreads bytes over the messages of one move, each under the per-message limit: 10
says of 200 four-byte characters (24 KB of escaped JSON) ride on its draw request, 10 more on
its answer. Within the default bounds (a move may say 20 times 200 characters), so clean here;
tests/sandbox/python/test_sandbox_flood.py plays it with smaller turn limits, which it goes over.
expect: clean
"""
import sys

SAY = "\U0001F600" * 200


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
        worker = _worker()
        worker.actions.extend(["s", SAY] for _ in range(10))
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        worker.actions.extend(["s", SAY] for _ in range(10))
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
