"""Positional-only parameters named like the guards, to shadow _getattr_ inside a function.
expect: load
"""


class Bot:
    def move(self, turn, _getattr_=getattr, /):
        return _getattr_(turn, "_move")
