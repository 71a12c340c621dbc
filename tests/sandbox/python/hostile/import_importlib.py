"""Imports importlib to load os by a computed name.
expect: load
"""
import importlib


class Bot:
    def move(self, turn):
        importlib.import_module("o" + "s").system("id")
