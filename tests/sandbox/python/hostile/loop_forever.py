"""while True: pass.
expect: faults=timeout retired
"""


class Bot:
    def move(self, turn):
        while True:
            pass
