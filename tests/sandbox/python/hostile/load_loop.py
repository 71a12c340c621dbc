"""Loops forever while the module loads.
expect: load
"""
while True:
    pass


class Bot:
    def move(self, turn):
        turn.finish()
