"""Asks for gigabytes at once and keeps what it can (the memory cap says no).
expect: faults=exception retired
"""


class Bot:
    def __init__(self):
        self.hoard = []

    def move(self, turn):
        self.hoard.append("x" * (2 ** 31))
