"""Imports os to run shell commands.
expect: load
"""
import os


class Bot:
    def move(self, turn):
        os.system("touch /tmp/arena-pwned")
