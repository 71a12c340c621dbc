"""Keeps each turn and acts through old ones later (in later moves and in end_round).
Says "STALE <what>" when an old turn still acted.
expect: clean
check: no-stale
"""
from arena import IllegalMove


class Bot:
    def __init__(self):
        self.old = []

    def poke(self, label):
        for turn in self.old[-3:]:
            for card in turn.hand:
                try:
                    turn.put(card)
                    self.old[-1].say("STALE put " + label)
                except IllegalMove:
                    pass
            try:
                turn.draw()
                self.old[-1].say("STALE draw " + label)
            except IllegalMove:
                pass
            try:
                turn.finish()
                self.old[-1].say("STALE finish " + label)
            except IllegalMove:
                pass

    def move(self, turn):
        self.poke("move")
        self.old.append(turn)
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

    def end_round(self, result):
        self.poke("end_round")
