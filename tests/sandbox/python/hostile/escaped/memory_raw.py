"""Escaped: allocates 1 GiB directly (the address-space limit refuses).
expect: clean
check: says-blocked
"""


class Bot:
    def move(self, turn):
        try:
            block = bytearray(2 ** 30)
            turn.say("ESCAPED allocated %d" % len(block))
        except MemoryError:
            turn.say("blocked MemoryError")
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
