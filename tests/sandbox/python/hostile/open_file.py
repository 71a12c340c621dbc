"""open() to read the referee's files.
expect: faults=exception retired
"""


class Bot:
    def move(self, turn):
        turn.say(open("/etc/passwd").read()[:50])
