"""Search: determinized search over sampled worlds with heuristic playouts (the forward model).

At each decision (a move's start, and again after its voluntary draw) the bot lists
its candidate moves: every sequence of puts the rules allow from its hand (a first
card, then cards of its rank ending on each possible last card, six covers, each
suit for a final jack), the voluntary draw, and finishing at once where allowed.
It samples worlds consistent with what it knows (``sampler(turn)``: the hidden
cards dealt so that every public fact holds, e.g. a seat that drew rather than
cover a six holds no cover, and a seat that drew rather than answer is taken to
hold no answer), plays each candidate in each world (the same worlds for every
candidate), covers any six it left, and plays the round out with the heuristic's
policy for every seat. A candidate's value is the round's score margin (the
opponents' mean score after the round, burns included, minus its own), plus a
bonus for the places when the round ends the game. Candidates are cut by half
after each stage (successive halving), so the playouts go to the close calls.
The budget is a number of playouts a decision (``Bot(playouts=N)``), so games
replay exactly; about 0.3 ms of CPU each.
"""

from arena import sampler

SUITS = ("s", "c", "h", "d")


class Bot:
    name = "search"

    def __init__(self, playouts=160):
        self.playouts = playouts

    def move(self, turn):
        import random

        plan = self.choose(turn, random, self.candidates(turn, drawn=False))
        if plan == "draw":
            turn.draw()
            plan = self.choose(turn, random, self.candidates(turn, drawn=True))
        for card, suit in plan:
            if not turn.can_put(card):
                break
            turn.put(card, suit)
        while not turn.can_finish():
            covers = turn.puttable()
            if covers:
                card = min(covers, key=lambda c: (c.rank == "j", -c.points))
                turn.put(card, self.suit_for(list(turn.hand)) if card.rank == "j" else None)
            elif turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()

    # -- candidates --------------------------------------------------------
    def candidates(self, turn, drawn):
        hand = list(turn.hand)
        out = []
        for first in turn.puttable():
            for cards in self.runs(hand, first):
                out.extend(self.with_suits(hand, cards))
        if turn.first or drawn or not out:
            out.append([])  # finish at once (or cover what must be covered)
        if not drawn and not turn.first and turn.can_draw():
            out.append("draw")
        return out

    def runs(self, hand, first):
        same = [c for c in hand if c.rank == first.rank and c is not first]
        runs = [[first]]
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
                plans.append(run + [cover] + [c for c in rest if c.rank == cover.rank and c is not cover])
            if not covers:
                plans.append(run)
        return plans

    def with_suits(self, hand, cards):
        """The plan as (card, suit) puts; a final jack once per suit, other jacks by suit_for."""
        left = [c for c in hand if c not in cards]
        puts = [(c, self.suit_for(left) if c.rank == "j" else None) for c in cards]
        if cards[-1].rank != "j":
            return [puts]
        return [puts[:-1] + [(cards[-1], s)] for s in SUITS]

    def suit_for(self, hand):
        counts = {s: 0 for s in SUITS}
        for c in hand:
            if c.rank != "j":
                counts[c.suit] += 1
        return max(SUITS, key=lambda s: counts[s])

    # -- search ------------------------------------------------------------
    def choose(self, turn, random, candidates):
        if len(candidates) == 1:
            return candidates[0]
        sample = sampler(turn)
        me = turn.seat
        limit = turn.rules.limit
        alive = list(range(len(candidates)))
        totals = [0.0] * len(candidates)
        counts = [0] * len(candidates)
        budget = self.playouts
        stages = 1
        size = len(alive)
        while size > 2:
            size = (size + 1) // 2
            stages += 1
        while True:
            per = max(1, budget // (stages * len(alive)))
            for _ in range(per):
                world = sample(random)
                for i in alive:
                    totals[i] += self.playout(world.clone(), candidates[i], me, limit)
                    counts[i] += 1
            if len(alive) <= 2 or stages <= 1:
                break
            alive.sort(key=lambda i: -totals[i] / counts[i])
            alive = alive[: (len(alive) + 1) // 2]
            stages -= 1
        return candidates[max(alive, key=lambda i: totals[i] / counts[i])]

    def playout(self, world, plan, me, limit):
        if plan == "draw":
            world.draw()
            world.play_move("heuristic")
        else:
            for card, suit in plan:
                world.put(card, suit)
            while not world.can_finish():
                covers = world.puttable()
                if covers:
                    card = min(covers, key=lambda c: (c.rank == "j", -c.points))
                    world.put(card, self.suit_for(list(world.hand(me))) if card.rank == "j" else None)
                elif world.can_draw():
                    world.draw()
                else:
                    break
            world.finish()
        world.playout("heuristic", max_moves=300)  # a bound on a move's CPU (heuristic rounds: at most ~90 moves)
        return self.value(world, me, limit)

    def value(self, world, me, limit):
        scores = world.scores()
        if world.in_round:  # stopped before the round's end: count the hands as they are
            points = world.points()
            scores = [scores[i] + points[i] for i in range(len(scores))]
        n = len(scores)
        margin = sum(scores) / (n - 1) - scores[me] * n / (n - 1)
        if max(scores) > limit:  # the round ends the game: places are what counts
            places = world.places()
            margin += 60 * (sum(places) / (n - 1) - places[me] * n / (n - 1))
        return margin
