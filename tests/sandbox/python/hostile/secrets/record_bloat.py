"""Fills the record: every move 30 says of 200 characters (half of them emoji, which JSON
escapes to 12 bytes each: "\\ud83d\\ude00"), a flood of printed output of emoji, and an
exception with such a message after each of the first two rounds (two faults: not retired).
tests/sandbox/python/test_hostile_secrets.py seats it at every seat and bounds the record.
"""


class Bot:
    def start_game(self, info):
        self.rounds = 0
        print("\U0001F600" * 5000)

    def end_round(self, result):
        self.rounds += 1
        if self.rounds <= 2:
            raise ValueError("\U0001F600" * 1000)

    def move(self, turn):
        text = "\U0001F600" * 200
        for _ in range(15):
            turn.say("y" * 200)
        for _ in range(15):
            turn.say(text)
        print(text * 25)
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
