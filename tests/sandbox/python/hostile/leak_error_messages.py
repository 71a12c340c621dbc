"""Tries every card of the deck and keeps the refusal messages, hoping one names a hidden card.
Says "ERR <tried> <message>" for each; the test checks that messages name only public cards.
expect: clean
check: errors-public
"""
from arena import Card, IllegalMove

RANKS = ["6", "7", "8", "9", "10", "j", "q", "k", "a"]


class Bot:
    def __init__(self):
        self.done = 0

    def move(self, turn):
        if self.done < 2:
            self.done += 1
            for rank in RANKS:
                for suit in "schd":
                    card = Card(rank + suit)
                    if card in turn.hand:
                        continue
                    try:
                        turn.put(card)
                    except IllegalMove as exc:
                        turn.say("ERR %s %s" % (card, exc))
                        if len(turn.history) < 0:
                            break
                    if self.done > 5:
                        break
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
