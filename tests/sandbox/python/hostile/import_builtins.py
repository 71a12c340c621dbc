"""Imports builtins to get the real open, exec and __import__.
expect: load
"""
import builtins


class Bot:
    def move(self, turn):
        builtins.open("/etc/passwd").read()
