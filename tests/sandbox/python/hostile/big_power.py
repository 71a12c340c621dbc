"""10**10**8: one bytecode, minutes of C. Only a kill from outside stops it.
expect: faults=timeout retired
"""


class Bot:
    def move(self, turn):
        n = 8
        turn.say(str(10 ** 10 ** n)[:5])
