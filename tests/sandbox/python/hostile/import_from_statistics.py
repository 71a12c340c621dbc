"""statistics imports sys at module level: ask for it by name at import time.
expect: load
"""
from statistics import sys


class Bot:
    def move(self, turn):
        sys.exit(1)
