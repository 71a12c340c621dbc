"""try/except* (exception groups): refused by the code policy.
expect: load
"""


class Bot:
    def move(self, turn):
        try:
            turn.finish()
        except* ValueError as group:
            turn.say(str(group.exceptions))
