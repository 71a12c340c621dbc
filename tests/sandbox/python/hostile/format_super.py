"""A str subclass reaches str.format through super(), then walks attributes.
expect: faults=exception retired
check: no-leak
"""


class Text(str):
    def walk(self, ob):
        return super().format(ob)


class Bot:
    def move(self, turn):
        turn.say("LEAK " + Text("{0._table}").walk(turn))
