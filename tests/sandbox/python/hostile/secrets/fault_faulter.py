"""Faults on purpose: each move it first puts a card it holds that may not be put, so the
referee records an IllegalMove fault whose detail names that card (a hidden one).
Paired with fault_snooper.py in tests/sandbox/python/test_hostile_secrets.py.
"""


class Bot:
    def move(self, turn):
        bad = [c for c in turn.hand if not turn.can_put(c)]
        if bad:
            turn.put(bad[0])  # raises IllegalMove, "...; <card> does not": a fault
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
