"""Imports the referee's engine through the arena package.
expect: load
"""
from arena import Game


class Bot:
    def move(self, turn):
        Game(2)
