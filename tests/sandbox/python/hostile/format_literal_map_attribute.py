"""str.format_map with an attribute walk in the template.
A literal template: checked and refused while loading.
expect: load
"""


class Bot:
    def move(self, turn):
        turn.say("{t._table.game.hands}".format_map({"t": turn}))
