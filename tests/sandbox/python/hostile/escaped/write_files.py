"""Escaped: write a file at an absolute path, in the working directory, and in /tmp (PATH from the test).
expect: clean
check: says-blocked
"""
import os

PATH = ""


class Bot:
    def move(self, turn):
        for path in (PATH, "relative.txt", "/tmp/arena-escaped.txt"):
            try:
                with open(path, "w") as fh:
                    fh.write("escaped")
                turn.say("ESCAPED wrote " + path)
            except OSError as exc:
                turn.say("blocked %s" % type(exc).__name__)
        try:
            fd = os.open(PATH, os.O_WRONLY | os.O_CREAT, 0o666)
            os.write(fd, b"escaped")
            turn.say("ESCAPED os.open")
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
