"""str.format_map with an attribute walk in the template.
The template is built at run time, past the load-time check of literal templates.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        turn.say(("{t." + "_table.game.hands}").format_map({"t": turn}))
