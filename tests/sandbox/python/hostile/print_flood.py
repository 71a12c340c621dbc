"""Prints a megabyte every move. Output is kept, capped, out of the other bots' view.
expect: clean
check: output-capped
"""


class Bot:
    def move(self, turn):
        line = "flood " * 1000
        for _ in range(170):
            print(line)
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
