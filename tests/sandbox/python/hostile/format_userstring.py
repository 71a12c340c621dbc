"""collections.UserString.format hands the template to str.format: an attribute walk
from a receiver that is not a str.
expect: faults=exception retired
check: no-leak
"""
import collections


class Bot:
    def move(self, turn):
        turn.say("LEAK " + collections.UserString("{0._move.hand}").format(turn).data)
