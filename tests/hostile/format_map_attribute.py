"""str.format_map with an attribute walk in the template.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        turn.say("{t._table.game.hands}".format_map({"t": turn}))
