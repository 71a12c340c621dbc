"""An attribute walk hidden in a nested format spec of a plain str: "{0:{1._move}}".
The template is built at run time, past the load-time check of literal templates.
expect: faults=exception retired
check: no-leak
"""


class Bot:
    def move(self, turn):
        turn.say("LEAK " + ("{0:{1." + "_move.hand}}").format("x", turn))
