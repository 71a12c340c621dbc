"""Imports sys to walk modules and frames.
expect: load
"""
import sys


class Bot:
    def move(self, turn):
        sys.modules["arena"].engine
