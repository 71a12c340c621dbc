"""Catastrophic backtracking needs re: (a+)+$ on a long non-matching string.
expect: load
"""
import re


class Bot:
    def move(self, turn):
        re.match(r"(a+)+$", "a" * 40 + "!")
