"""Says ten megabytes a move, a thousand times.
expect: clean
check: say-capped
"""


class Bot:
    def move(self, turn):
        big = "y" * (10 * 2 ** 20)
        for _ in range(1000):
            turn.say(big)
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
