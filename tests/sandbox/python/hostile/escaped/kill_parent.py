"""Escaped: kill the referee (the parent process).
expect: faults=crash retired
"""
import os
import signal


class Bot:
    def move(self, turn):
        os.kill(os.getppid(), signal.SIGKILL)
        turn.say("ESCAPED killed parent")
