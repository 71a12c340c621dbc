"""Escaped: read the referee's environment (a secret is set there), memory map and files
through /proc, and its own os.environ.
expect: clean
check: says-blocked no-secret
"""
import os


class Bot:
    def move(self, turn):
        turn.say("ENV " + " ".join("%s=%s" % kv for kv in os.environ.items()))
        parent = os.getppid()
        for path in ("/proc/%d/environ" % parent, "/proc/%d/cmdline" % parent, "/proc/%d/maps" % parent,
                     "/proc/self/environ", "/etc/passwd"):
            try:
                with open(path, "rb") as fh:
                    turn.say("ESCAPED read %s %r" % (path, fh.read(300)))
            except OSError as exc:
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
