"""Plays a legal move, then returns a 100 MB value from move (return values are ignored).
expect: clean
"""


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
        return "z" * (100 * 2 ** 20)
