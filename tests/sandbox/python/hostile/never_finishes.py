"""Returns from move without acting, so the move cannot finish.
expect: faults=illegal-finish retired
"""


class Bot:
    def move(self, turn):
        return None
