"""Escaped: fork a child (seccomp kills the worker: SIGSYS).
expect: faults=crash retired
"""
import os


class Bot:
    def move(self, turn):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        turn.say("ESCAPED forked %d" % pid)
