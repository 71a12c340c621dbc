"""Burner: near the limit, keeps exactly the points that take its score to 125, which burns to 0."""

# Idea: R8.3 turns a score of exactly 125 into 0. When our score is S and
# the burn is B, ending a round with exactly B - S points in hand wipes our
# score clean, which beats going out (that only adds 0). So once B - S is
# small enough to hold, this bot steers its hand towards exactly that many
# points: it puts the cards that bring its hand's total down to the target
# and keeps the rest. Otherwise it plays greedy: costliest card first.

import itertools


class Bot:
    name = "burner"

    def start_game(self, game):
        self.burn = game.rules.burn  # None when the variant has no burn
        self.points = game.rules.points  # the point table (R1.3)

    def move(self, turn):
        target = self.target(turn)
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                card = self.pick(turn, options, target)
                if card is None:
                    break
                turn.put(card, self.order(turn) if card.rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()  # cover a six (R5.3)
            else:
                break
        turn.finish()

    def target(self, turn):
        """Points to hold at the round's end for a burn, or None when out of reach."""
        if self.burn is None:
            return None
        missing = self.burn - turn.players[turn.seat].score
        if 0 < missing <= 45:
            return missing
        return None

    def reachable(self, hand, target):
        """Whether some of ``hand`` adds up to exactly ``target`` points."""
        values = [self.points[c.rank] for c in hand if self.points[c.rank] > 0]
        for size in range(1, len(values) + 1):
            for combo in itertools.combinations(values, size):
                if sum(combo) == target:
                    return True
        return False

    def pick(self, turn, options, target):
        greedy = max(options, key=lambda c: (c.rank != "6", self.points[c.rank]))
        if target is None:
            return greedy
        hand = list(turn.hand)
        held = sum(self.points[c.rank] for c in hand)
        if not self.reachable(hand, target):
            return greedy  # no burn in this hand: shed points

        def keeps_burn(card):
            rest = list(hand)
            rest.remove(card)
            return self.reachable(rest, target)

        good = [c for c in options if keeps_burn(c)]
        if held == target:
            good = [c for c in good if self.points[c.rank] == 0] or good
        if not good:
            # every put would break the burn; stop if we may, else the least harm
            if turn.can_finish():
                return None
            return min(options, key=lambda c: self.points[c.rank])
        # shed the cards outside the burn set first: costly ones, then zeros
        return max(good, key=lambda c: (c.rank != "6", self.points[c.rank]))

    def order(self, turn):
        held = {s: 0 for s in "schd"}
        for c in turn.hand:
            if c.rank != "j":
                held[c.suit] = held[c.suit] + 1
        return max("schd", key=lambda s: held[s])
