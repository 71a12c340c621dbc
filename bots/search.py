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
policy for every seat. A candidate's value at two seats is the chance to win the
game from the scores after the round (``win_table``: later rounds won at even
odds, the loser taking the points heuristic play gives, burns and the limit as the
rules say; 1 or 0 when the round ends the game). At more seats it is the round's
score margin (the opponents' mean score after the round, burns included, minus its
own), plus a bonus for the places when the round ends the game. Candidates are cut
by half after each stage (successive halving), so the playouts go to the close
calls. The budget is a number of playouts a decision (``Bot(playouts=N)``, 400 by
default, about 0.2 ms of CPU each), counted in moves played, not in seconds, so games
replay exactly. Two bounds keep it inside the limits: a move stops searching after
MOVE_WORK moves played out (about 0.4 s) and takes the best so far, and after
GAME_WORK in one game the budget drops to a quarter (the game's CPU bank).
"""

from arena import sampler

SUITS = ("s", "c", "h", "d")

# The points the loser of a 2-player round takes, and their shares: 300 games of two
# heuristic bots under the contest rules (2,960 rounds; mean 23.5).
# fmt: off
ROUND_POINTS = (
    (0, 0.176), (10, 0.202), (15, 0.074), (20, 0.128), (25, 0.076), (30, 0.078), (35, 0.059), (40, 0.048),
    (45, 0.034), (50, 0.028), (55, 0.025), (60, 0.018), (65, 0.018), (70, 0.009), (75, 0.007), (80, 0.006),
    (85, 0.004), (90, 0.003), (95, 0.002), (100, 0.001), (105, 0.002), (110, 0.001), (115, 0.001),
)
# fmt: on
STEP = 5  # every score of the contest rules is a multiple of 5
# The work of a game's searches, in moves played out (a sample counts as SAMPLE_WORK
# moves), before the budget drops to a quarter: a bound on the game's CPU, about
# 15-20 us a move (benchmarks/strength.py search: ~15-20 s of the 30 s game bank).
GAME_WORK = 1_000_000
SAMPLE_WORK = 6
# The work of one move (its one or two decisions), in the same units, before its search
# stops and takes the best so far: about 0.4 s of CPU, well inside the move's 1 s limit.
MOVE_WORK = 25_000


def win_table(limit, burn):
    """P(win the game) of the first of two seats by scores (a, b) // STEP before a round:
    each round won by either seat with even odds, the loser taking ROUND_POINTS, a score
    of exactly ``burn`` becoming 0 and one above ``limit`` losing (R2.3, R8.3)."""
    total = sum(p for _, p in ROUND_POINTS)
    zero = sum(p for x, p in ROUND_POINTS if x == 0) / total
    steps = [(x // STEP, p / total) for x, p in ROUND_POINTS if x > 0]
    top = limit // STEP
    after = {}
    for a in range(top + 1):
        for x, _ in steps:
            s = a * STEP + x * STEP
            after[a, x] = 0 if s == burn else (None if s > limit else s // STEP)
    win = [[0.5] * (top + 1) for _ in range(top + 1)]
    order = sorted(((a, b) for a in range(top + 1) for b in range(top + 1)), key=lambda ab: -(ab[0] + ab[1]))
    for _ in range(60):  # burns loop back to 0: sweep until settled
        change = 0.0
        for a, b in order:
            v = 0.0
            for x, p in steps:
                nb = after[b, x]
                v += p * (1.0 if nb is None else win[a][nb])
                na = after[a, x]
                v += p * (0.0 if na is None else win[na][b])
            v = v / 2 / (1 - zero)  # a round where the loser takes 0 changes nothing
            change = max(change, abs(v - win[a][b]))
            win[a][b] = v
        if change < 1e-6:
            break
    return win


class Bot:
    name = "search"

    def __init__(self, playouts=400):
        self.playouts = playouts
        self.stop = 0  # the work at which this move's search stops
        self.tables = {}  # (limit, burn) -> win_table
        self.win = None
        self.work = 0  # moves played out this game (a new Bot every game)

    def move(self, turn):
        import random

        self.stop = self.work + MOVE_WORK
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
        rules = turn.rules
        limit = rules.limit
        self.win = None
        scores = [p.score for p in turn.players]
        grid = all(v % STEP == 0 for v in list(rules.points.values()) + scores) and 0 <= min(scores)
        if len(turn.players) == 2 and grid and limit <= 400 and not rules.teams and not rules.jack_finish:
            key = (limit, rules.burn)
            if key not in self.tables:
                self.tables[key] = win_table(limit, rules.burn)
            self.win = self.tables[key]
        alive = list(range(len(candidates)))
        totals = [0.0] * len(candidates)
        counts = [0] * len(candidates)
        budget = self.playouts if self.work < GAME_WORK else max(1, self.playouts // 4)
        stages = 1
        size = len(alive)
        while size > 2:
            size = (size + 1) // 2
            stages += 1
        stop = self.stop
        while True:
            per = max(1, budget // (stages * len(alive)))
            for _ in range(per):
                world = sample(random)
                self.work += SAMPLE_WORK
                for i in alive:
                    totals[i] += self.playout(world.clone(), candidates[i], me, limit)
                    counts[i] += 1
                if self.work > stop:  # a long decision: what is known now decides
                    break
            if len(alive) <= 2 or stages <= 1 or self.work > stop:
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
        self.work += 1 + world.playout("heuristic", max_moves=300)  # bounds a move (rounds: ~90 moves at most)
        return self.value(world, me, limit)

    def value(self, world, me, limit):
        scores = world.scores()
        if world.in_round:  # stopped before the round's end: count the hands as they are
            points = world.points()
            scores = [scores[i] + points[i] for i in range(len(scores))]
        n = len(scores)
        over = max(scores) > limit  # the round ends the game: places are what counts
        if n == 2 and self.win is not None:  # two seats: the chance to win the game
            if over:
                places = world.places()
                return 0.5 if places[0] == places[1] else float(places[me] == 1)
            return self.win[scores[me] // STEP][scores[1 - me] // STEP]  # on the grid: checked in choose
        margin = sum(scores) / (n - 1) - scores[me] * n / (n - 1)
        if over:
            places = world.places()
            margin += 60 * (sum(places) / (n - 1) - places[me] * n / (n - 1))
        return margin
