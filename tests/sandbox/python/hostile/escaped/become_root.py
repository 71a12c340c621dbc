"""Escaped: tries to get root back and to lift its limits.
expect: clean
check: says-blocked
"""
import os
import resource


class Bot:
    def move(self, turn):
        for name, fn in (("setuid", lambda: os.setuid(0)),
                         ("rlimit", lambda: resource.setrlimit(resource.RLIMIT_AS, (-1, -1)))):
            try:
                fn()
                turn.say("ESCAPED " + name)
            except (OSError, ValueError) as exc:
                turn.say("blocked %s" % type(exc).__name__)
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
