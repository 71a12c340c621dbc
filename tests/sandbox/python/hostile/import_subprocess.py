"""Imports subprocess to spawn a shell.
expect: load
"""
from subprocess import run


class Bot:
    def move(self, turn):
        run(["sh", "-c", "id"])
