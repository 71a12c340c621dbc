"""Tablesize: plays the attack cards hard heads-up, sheds points and hoards a jack at a full table."""

# Idea: an effect card's group hits the next players one per card (R6).
# With two players every 7, 8 and ace hits the only opponent, and an ace or
# an eight even gives us the next move again, so heads-up they are worth
# more than their points. With four to six players they mostly hit players
# we do not care about, a round lasts longer and the suit to follow changes
# more often, so a jack kept as a way out is worth its 20-point risk until
# our hand is small.


class Bot:
    name = "tablesize"

    def start_game(self, game):
        n = len(game.players)
        self.n = n
        # weight of an attack card (7, 8, a) over its points, by table size
        self.attack = {2: 30, 3: 12}.get(n, 4)
        # at a full table keep one jack until the hand is this small
        self.keep_jack_until = 0 if n <= 3 else 3

    def move(self, turn):
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                card = self.pick(turn, options)
                if card is None:
                    break  # keep the rest: stop after what we put
                turn.put(card, self.order(turn) if card.rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()  # cover a six (R5.3)
            else:
                break
        turn.finish()

    def pick(self, turn, options):
        jacks = [c for c in turn.hand if c.rank == "j"]
        if len(turn.hand) > self.keep_jack_until and len(jacks) == 1 and len(options) > 1:
            options = [c for c in options if c.rank != "j"]  # hoard the only jack
        if turn.put_this_move and turn.can_finish() and self.n > 3:
            # with many players, adding an attack card only matters if it hits
            # someone close to going out; otherwise still shed points
            options = [c for c in options if c.points > 0 or c.rank in "78a"] or options
        return max(options, key=lambda c: self.value(turn, c))

    def value(self, turn, card):
        score = card.points
        if card.rank in ("7", "8", "a"):
            score = score + self.attack
            following = turn.players[(turn.seat + 1) % self.n]
            if following.cards <= 2:
                score = score + 20  # hit someone about to go out
        if card.rank == "6":
            score = score - 10  # needs a cover
        return score

    def order(self, turn):
        held = {s: 0 for s in "schd"}
        for c in turn.hand:
            if c.rank != "j":
                held[c.suit] = held[c.suit] + 1
        return max("schd", key=lambda s: held[s])
