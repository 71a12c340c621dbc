"""Unbounded recursion.
expect: faults=exception retired
"""


def dive(n):
    return dive(n + 1) + 1


class Bot:
    def move(self, turn):
        dive(0)
