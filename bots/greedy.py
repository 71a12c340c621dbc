"""Greedy: sheds its most expensive cards first and orders the suit it holds most."""


class Bot:
    name = "greedy"

    def move(self, turn):
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                card = max(options, key=self.value)
                turn.put(card, self.best_suit(turn, card) if card.rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()  # a six to cover: draw until a cover comes
            else:
                break
        turn.finish()

    def value(self, card):
        # most points first; among equals, the rank we hold most of (sheds more cards)
        return (card.points, card.rank != "6")

    def best_suit(self, turn, jack):
        counts = {"s": 0, "c": 0, "h": 0, "d": 0}
        for card in turn.hand:
            if card.rank != "j":
                counts[card.suit] += 1
        return max(sorted(counts), key=lambda s: counts[s])
