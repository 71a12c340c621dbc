"""Heuristic: plans whole moves; keeps jacks for the finish, aims 7/8/A at the next to go out, counts the pile."""

SUITS = "schd"
RANKS = ["6", "7", "8", "9", "10", "j", "q", "k", "a"]


class Bot:
    name = "heuristic"

    def __init__(self):
        self.cards = None

    def move(self, turn):
        hand = list(turn.hand)
        options = turn.puttable()
        plan = self.best_plan(turn, hand, options)
        if plan is None and turn.can_draw():
            turn.draw()  # nothing worth putting: draw one
            hand = list(turn.hand)
            plan = self.best_plan(turn, hand, turn.puttable(), drawn=True)
        if plan:
            for card in plan:
                if not turn.can_put(card):
                    break
                turn.put(card, self.order(turn, card) if card.rank == "j" else None)
        # Whatever remains: cover a six (drawing until a cover comes), then finish.
        while not turn.can_finish():
            covers = turn.puttable()
            if covers:
                card = min(covers, key=lambda c: (c.rank == "j", -c.points))
                turn.put(card, self.order(turn, card) if card.rank == "j" else None)
            elif turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()

    # -- planning ----------------------------------------------------------
    def best_plan(self, turn, hand, options, drawn=False):
        """The best sequence of cards to put, or None when drawing is better."""
        if not options:
            return [] if (turn.first or drawn) else None
        unseen = self.unseen(turn, hand)
        best, best_value = None, None
        for first in options:
            for plan in self.plans(turn, hand, first):
                value = self.value(turn, hand, plan, unseen)
                if best_value is None or value > best_value:
                    best, best_value = plan, value
        if turn.first or drawn or turn.put_this_move:
            return best
        # Drawing instead: worth it only to keep a lone jack while the hand is big.
        if best_value < -20 and len(hand) > 3:
            return None
        return best

    def plans(self, turn, hand, first):
        """Candidate put sequences starting with ``first`` (same-rank runs, six covers)."""
        same = [c for c in hand if c.rank == first.rank and c is not first]
        runs = [[first]]
        if same:
            # all of the rank, ending on each possible last card (its suit is left to follow)
            for last in same:
                runs.append([first] + [c for c in same if c is not last] + [last])
        if first.rank != "6":
            return runs
        plans = []
        for run in runs:
            rest = [c for c in hand if c not in run]
            six = run[-1]
            covers = [c for c in rest if c.rank != "6" and (c.suit == six.suit or c.rank == "j")]
            for cover in covers:
                follow = [c for c in rest if c.rank == cover.rank and c is not cover]
                plans.append(run + [cover] + follow)
            if not covers:
                plans.append(run)  # will have to draw for a cover
        return plans

    def value(self, turn, hand, plan, unseen):
        """Higher is better: points shed, going out, effects on the right players."""
        n = len(turn.players)
        me = turn.seat
        left = len(hand) - len(plan)
        last = plan[-1]
        value = 0.0
        for card in plan:
            value += 4 * card.points + 3
        if left == 0 and last.rank != "6":
            return 10000 + value
        if last.rank == "6":
            value -= 40  # uncovered six: forced draws follow
        jacks = sum(1 for c in plan if c.rank == "j")
        if jacks:
            keep = 8 if left <= 2 else 30  # a jack is the best last card: keep it
            value -= keep * jacks
        # effects of the final group
        k = 0
        for card in reversed(plan):
            if card.rank != last.rank:
                break
            k += 1
        if last.rank in ("7", "8", "a"):
            for i in range(k):
                target = turn.players[(me + 1 + i % (n - 1)) % n]
                danger = 3.0 if target.cards <= 2 else (1.5 if target.cards <= 4 else 0.6)
                if last.rank == "7":
                    value += 4 * danger
                elif last.rank == "8":
                    value += (5 if n == 3 else 8) * danger
                    if n == 2:
                        value += 6  # the turn comes straight back
                else:
                    value += (4 if n > 2 else 10) * danger
            if all(p.cards > 4 for p in turn.players if p.seat != me) and left > 2:
                value -= 4 * k  # save them for someone about to go out
        # what the next player can answer: unseen cards matching what we leave on top
        suit = last.suit if last.rank != "j" else self.order_from(hand, plan)
        answers = 0
        for card in unseen:
            if card.rank == "j" or card.suit == suit or card.rank == last.rank:
                answers += 1
        value -= 0.4 * answers * 10 / max(len(unseen), 1)
        # what we can play next time from what remains
        remaining = [c for c in hand if c not in plan]
        if remaining:
            follow = sum(1 for c in remaining if c.rank == "j" or c.suit == suit or c.rank == last.rank)
            value += 1.5 * min(follow, 2)
        return value

    # -- memory: cards not seen this round ---------------------------------
    def unseen(self, turn, hand):
        seen = set(str(c) for c in turn.pile)
        seen.update(str(c) for c in hand)
        return [c for c in self.deck() if str(c) not in seen]

    def deck(self):
        if self.cards is None:
            from arena import Card

            self.cards = [Card(r + s) for r in RANKS for s in SUITS]
        return self.cards

    # -- jacks -------------------------------------------------------------
    def order(self, turn, jack):
        return self.order_from(list(turn.hand), [])

    def order_from(self, hand, plan):
        """The suit we hold most after the plan (jacks aside); ties: fewer seen... spades first."""
        counts = {s: 0 for s in SUITS}
        for card in hand:
            if card.rank != "j" and card not in plan:
                counts[card.suit] += 1 + card.points / 20
        return max(SUITS, key=lambda s: counts[s])
