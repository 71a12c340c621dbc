"""Grows its memory 64 MiB a move, catching MemoryError and trying again.
expect: faults=exception
"""


class Bot:
    def __init__(self):
        self.hoard = []

    def move(self, turn):
        try:
            self.hoard.append(["x"] * (8 * 2 ** 20))
        except MemoryError:
            self.hoard = []
            raise
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
