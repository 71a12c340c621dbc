"""Reads a function's __globals__ to reach the worker's module namespace.
expect: load
"""


class Bot:
    def move(self, turn):
        turn.put.__func__.__globals__["Card"]
