"""Module-level names that start with an underscore (e.g. to clobber _getattr_).
expect: load
"""
_getattr_ = getattr


class Bot:
    def move(self, turn):
        turn.finish()
