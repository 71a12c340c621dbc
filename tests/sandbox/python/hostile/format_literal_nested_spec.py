"""An attribute walk hidden in a nested format spec of a plain str: "{0:{1._move}}".
A literal template: checked and refused while loading.
expect: load
"""


class Bot:
    def move(self, turn):
        turn.say("LEAK " + "{0:{1._move.hand}}".format("x", turn))
