"""Counter: counts the cards seen on the pile to guess which suits the next player lacks."""

# Idea: everything put on the pile is public (R10), and so is every draw.
# A player who draws at the start of a move and then finishes without
# putting held no card of the suit to follow (nor the top's rank, nor a
# jack). Until they take in new cards, that suit is a good one to leave
# them. Cards of a suit that are on the pile or in our hand cannot be in
# anybody else's hand either, so a much-played suit is scarce.
# This bot leaves the next player such a suit whenever it can.

SUITS = "schd"


class Bot:
    name = "counter"

    def move(self, turn):
        self.lacks = self.guess_lacks(turn)
        self.following = (turn.seat + 1) % len(turn.players)
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                card = max(options, key=lambda c: self.value(turn, c))
                turn.put(card, self.order(turn) if card.rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()  # cover a six: draw until a cover comes (R5.3)
            else:
                break
        turn.finish()

    def guess_lacks(self, turn):
        """Per seat, the suits it showed it lacked this round (from public history)."""
        lacks = [set() for p in turn.players]
        suit = None  # the suit to follow as the history goes
        mover, drew, put = None, False, False
        for event in turn.history:
            kind = event["event"]
            if kind == "deal":
                lacks = [set() for p in turn.players]
            elif kind == "put":
                if event.get("opening"):
                    suit = event.get("suit", event["card"][-1])
                    continue
                if mover != event["seat"]:
                    mover, drew = event["seat"], False
                put = True
                lacks[mover].discard(event["card"][-1])  # they held that suit
                suit = event.get("suit", event["card"][-1])
            elif kind == "draw":
                if mover != event["seat"]:
                    mover, put = event["seat"], False
                drew = True
            elif kind == "finish":
                if drew and not put and suit is not None:
                    lacks[event["seat"]].add(suit)  # drew, still could not follow
                mover, drew, put = None, False, False
            elif kind == "penalty":
                lacks[event["seat"]] = set()  # new unknown cards
        return lacks

    def scarcity(self, turn, suit):
        """How many cards of ``suit`` are out of other hands: on the pile or in ours."""
        return sum(1 for c in turn.pile if c.suit == suit) + sum(1 for c in turn.hand if c.suit == suit)

    def value(self, turn, card):
        score = card.points  # shed the costly cards first (R8.2)
        if card.rank == "6":
            score = score - 8  # a six needs a cover: not as a first choice
        if card.rank != "j":  # a jack's suit is chosen by order()
            if card.suit in self.lacks[self.following]:
                score = score + 12
            score = score + self.scarcity(turn, card.suit) / 2
        return score

    def order(self, turn):
        """The suit a jack orders: one the next player lacks, that we can follow later."""
        held = {s: sum(1 for c in turn.hand if c.suit == s and c.rank != "j") for s in SUITS}

        def worth(suit):
            lacked = 10 if suit in self.lacks[self.following] else 0
            return lacked + 2 * held[suit] + self.scarcity(turn, suit) / 2

        return max(SUITS, key=worth)
