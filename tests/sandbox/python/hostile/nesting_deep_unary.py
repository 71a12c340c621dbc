"""300 nested unary minus signs: a small file whose syntax tree is deeper than every
recursive pass of the code policy (RecursionError in the transformer before the fix).
expect: load
"""


class Bot:
    def move(self, turn):
        x = ------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------1
        turn.finish()
