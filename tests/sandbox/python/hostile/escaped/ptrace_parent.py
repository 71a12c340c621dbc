"""Escaped: attach to the referee with ptrace to read its memory.
expect: faults=crash retired
"""
import ctypes
import os


class Bot:
    def move(self, turn):
        libc = ctypes.CDLL(None)
        result = libc.ptrace(16, os.getppid(), None, None)
        turn.say("ESCAPED ptrace %d" % result)
