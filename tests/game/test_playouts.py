"""Random playouts with invariants, for every table size and the variants.

A fuzz driver plays whole games through the engine's checked path. At each
step it may first try a random action (a card not held, a card that does not
match, a draw or finish when not allowed, a bad suit) and asserts the engine
accepts exactly the actions that an independent predicate written here
allows, and that refused ones change nothing. Then it plays a random legal
action. After every action all 36 cards are accounted for. The driver keeps
its own model of the move (cards put, the one draw, the suit to follow),
of lost turns and of whose move comes next, and checks effects, round
scores (with burns) and places against it; a second pass recomputes every
round's points and scores from the game log alone.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from conftest import take_snapshot  # noqa: E402  (tests/ is on sys.path under pytest)

from arena import verify as independent_checker  # the independent checker ships as arena.verify
from arena.errors import IllegalMove
from arena.game.cards import DECK, SUITS, Card
from arena.game.engine import Game
from arena.game.rules import Rules

DECK_COUNT = Counter(DECK)


# -- an independent statement of the move rules (R4, R5, R7.2) ----------------


def matches(card: Card, top: Card, suit: str) -> bool:
    return card.rank == "j" or card.suit == suit or card.rank == top.rank


def may_put(card: Card, hand: list[Card], top: Card, suit: str, put: list[Card]) -> bool:
    if card not in hand:
        return False
    if not put or put[-1].rank == "6":
        return matches(card, top, suit)
    return card.rank == put[-1].rank


def may_draw(hand: list[Card], top: Card, suit: str, put: list[Card], drew: bool, drawable: bool) -> bool:
    if not drawable:
        return False
    if put and put[-1].rank == "6":
        return not any(matches(c, top, suit) for c in hand)
    return not put and not drew


def may_finish(hand: list[Card], top: Card, suit: str, put: list[Card], drew: bool, drawable: bool) -> bool:
    if put and put[-1].rank == "6":
        return not drawable and not any(matches(c, top, suit) for c in hand)
    return bool(put) or drew or not drawable


def final_group(put: list[Card]) -> list[Card]:
    group: list[Card] = []
    for card in reversed(put):
        if group and card.rank != group[0].rank:
            break
        group.insert(0, card)
    return group


def places(scores: list[int], teams: bool, retired: frozenset[int] = frozenset()) -> list[int]:
    n = len(scores)
    if teams:
        half = n // 2
        scores = [scores[s % half] + scores[s % half + half] for s in range(n)]
    key = [(s in retired, scores[s]) for s in range(n)]
    return [1 + sum(1 for t in range(n) if key[t] < key[s]) for s in range(n)]


# -- the fuzz driver ------------------------------------------------------------


class Driver:
    def __init__(self, n: int, rules: Rules, seed: int, fuzz: float = 0.3) -> None:
        self.n = n
        self.rules = rules
        self.rng = random.Random(seed)
        self.fuzz = fuzz
        self.game = Game(n, rules, seed=seed)
        self.accepted = Counter()
        self.refused = Counter()
        # the driver's own model
        self.put: list[Card] = []
        self.drew = False
        self.suit = ""
        self.skips = [0] * n
        self.scores = [0] * n
        self.last_winner: int | None = None
        self.moves = 0

    # facts from the table (cards are checked for conservation separately)
    def view(self) -> tuple[list[Card], Card, bool]:
        g = self.game
        return g.hands[g.mover], g.pile[-1], (len(g.stock) > 0 or len(g.pile) > 1)

    def check_cards(self) -> None:
        g = self.game
        every = g.all_cards()
        assert len(every) == 36 and len(set(every)) == 36 and all(type(c) is Card for c in every), (
            "cards lost or duplicated"
        )
        assert g.round_pile[-len(g.pile) :] == g.pile or len(g.pile) == 1

    def start_round(self) -> None:
        g = self.game
        g.start_round()
        r = g.round
        expected_first = (
            self.last_winner
            if self.rules.first_player == "winner" and self.last_winner is not None
            else (r - 1) % self.n
        )
        assert g.mover == expected_first
        assert [len(h) for h in g.hands] == [self.rules.hand_size] * self.n
        assert len(g.pile) == 1
        self.put = [g.pile[-1]]
        self.drew = False
        self.suit = g.pile[-1].suit
        self.skips = [0] * self.n
        self.moves = 0
        self.check_cards()

    def random_attempt(self) -> tuple[str, Any, Any]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.6:
            hand = self.game.hands[self.game.mover]
            card = rng.choice(hand) if hand and rng.random() < 0.6 else rng.choice(DECK)
            suit = None
            if card.rank == "j":
                suit = rng.choice(["s", "c", "h", "d", None, "x", "H"])
            return ("put", card, suit)
        return ("draw", None, None) if roll < 0.8 else ("finish", None, None)

    def allowed(self, action: tuple[str, Any, Any]) -> bool:
        hand, top, drawable = self.view()
        kind, card, suit = action
        if kind == "put":
            if card.rank == "j" and suit is not None and suit.lower() not in SUITS:
                return False
            return may_put(card, hand, top, self.suit, self.put)
        if kind == "draw":
            return may_draw(hand, top, self.suit, self.put, self.drew, drawable)
        return may_finish(hand, top, self.suit, self.put, self.drew, drawable)

    def legal_actions(self) -> list[tuple[str, Any, Any]]:
        hand, top, drawable = self.view()
        out: list[tuple[str, Any, Any]] = []
        for card in hand:
            if may_put(card, hand, top, self.suit, self.put):
                out.append(("put", card, self.rng.choice(SUITS) if card.rank == "j" else None))
        if may_draw(hand, top, self.suit, self.put, self.drew, drawable):
            out.append(("draw", None, None))
        if may_finish(hand, top, self.suit, self.put, self.drew, drawable):
            out.append(("finish", None, None))
        return out

    def attempt(self, action: tuple[str, Any, Any]) -> bool:
        g = self.game
        expected = self.allowed(action)
        before = take_snapshot(g)
        kind, card, suit = action
        try:
            if kind == "put":
                g.put(card, suit)
            elif kind == "draw":
                got = g.draw()
            else:
                g.finish()
        except IllegalMove as exc:
            assert not expected, f"refused a legal {action}: {exc}"
            assert exc.rule.startswith("R")
            assert take_snapshot(g) == before, f"refused {action} changed the game"
            self.refused[kind] += 1
            return False
        assert expected, (
            f"accepted an illegal {action} (hand {before['hands'][before['mover']]}, "
            f"top {before['pile'][-1]}, suit {self.suit}, put {self.put}, drew {self.drew})"
        )
        self.accepted[kind] += 1
        mover = before["mover"]
        if kind == "put":
            self.put.append(card)
            self.suit = (suit.lower() if suit else card.suit) if card.rank == "j" else card.suit
            assert g.pile[-1] is card and card not in g.hands[mover]
            assert g.move.suit == self.suit
        elif kind == "draw":
            if not self.put:
                self.drew = True
            assert got in g.hands[mover] and len(g.hands[mover]) == len(before["hands"][mover]) + 1
            if not before["stock"]:
                assert g.log[before["log"]]["event"] == "reshuffle"
                assert g.pile == [before["pile"][-1]]
        else:
            self.after_finish(mover, before)
        self.check_cards()
        return True

    def after_finish(self, mover: int, before: dict) -> None:
        g, n, rules = self.game, self.n, self.rules
        self.moves += 1
        new = g.log[before["log"] :]
        assert new[0] == {"event": "finish", "seat": mover}
        # R6 effects, from the driver's model of the move
        group = final_group(self.put)
        rank = group[-1].rank if group else None
        k = len(group)
        expected: list[tuple[int, str]] = []
        skips_added = [0] * n
        if rank in ("7", "8", "a"):
            if rules.stacked_effects:
                t = (mover + 1) % n
                if rank == "7":
                    expected += [(t, "7")] * k
                elif rank == "8":
                    expected += [(t, "8")] * (2 * k)
                    skips_added[t] += 1
                else:
                    skips_added[t] += k
            else:
                others = [(mover + 1 + i) % n for i in range(n - 1)]
                for i in range(k):
                    t = others[i % (n - 1)]
                    if rank == "7":
                        expected.append((t, "7"))
                    elif rank == "8":
                        expected += [(t, "8"), (t, "8")]
                        skips_added[t] += 1
                    else:
                        skips_added[t] += 1
        penalties = [(e["seat"], e["rank"]) for e in new if e["event"] == "penalty"]
        assert penalties == expected[: len(penalties)]
        if len(penalties) < len(expected):  # R7.2: the rest lapsed
            assert not g.stock and len(g.pile) == 1
        # effect draws go to the targets' hands
        for seat in range(n):
            drawn = sum(1 for s, _ in penalties if s == seat)
            assert len(g.hands[seat]) == len(before["hands"][seat]) + drawn
        self.skips = [a + b for a, b in zip(self.skips, skips_added, strict=True)]
        self.put, self.drew = [], False
        if not g.hands[mover] or self.moves >= rules.max_moves:
            winner = mover if not g.hands[mover] else None
            self.check_round_end(winner, group)
            return
        # R6.5 lost turns: skip lines, then the next mover
        seat = (mover + 1) % n
        skipped = []
        while self.skips[seat] > 0:
            self.skips[seat] -= 1
            skipped.append(seat)
            seat = (seat + 1) % n
        assert [e["seat"] for e in new if e["event"] == "skip"] == skipped
        assert g.mover == seat and g.in_round
        assert g.skips == self.skips

    def check_round_end(self, winner: int | None, group: list[Card]) -> None:
        g, rules, n = self.game, self.rules, self.n
        assert not g.in_round
        event = g.log[-1]
        assert event["event"] == "round" and event["winner"] == winner
        points = [sum(rules.points[c.rank] for c in g.hands[s]) for s in range(n)]
        scores = [self.scores[s] + points[s] for s in range(n)]
        if winner is not None and rules.jack_finish:
            scores[winner] -= rules.jack_finish * sum(1 for c in group if c.rank == "j")
        burned = [s for s in range(n) if rules.burn is not None and scores[s] == rules.burn]
        for s in burned:
            scores[s] = 0
        assert event["points"] == points
        assert event["scores"] == scores == g.scores
        assert event["burned"] == burned
        self.scores = scores
        self.last_winner = winner
        assert g.over == (any(s > rules.limit for s in scores) or g.round >= rules.max_rounds)

    def play(self, max_actions: int = 200_000) -> None:
        g, rng = self.game, self.rng
        actions = 0
        while not g.over:
            self.start_round()
            while g.in_round:
                actions += 1
                assert actions < max_actions, "the game does not end"
                if rng.random() < self.fuzz:
                    self.attempt(self.random_attempt())
                    if not g.in_round:
                        break
                legal = self.legal_actions()
                assert legal, "no legal action: the game is stuck"
                finish = [a for a in legal if a[0] == "finish"]
                if finish and rng.random() < 0.4:
                    action = finish[0]
                else:
                    action = rng.choice(legal)
                assert self.attempt(action)
        result = g.end()
        losers = {s for s in range(self.n) if g.scores[s] > self.rules.limit}
        if self.rules.teams:
            losers |= {(s + self.n // 2) % self.n for s in losers}
        assert result.losers == tuple(sorted(losers))
        assert list(result.places) == places(g.scores, self.rules.teams)
        assert g.log[-1] == {
            "event": "end",
            "scores": g.scores,
            "losers": sorted(losers),
            "places": list(result.places),
            "rounds": g.round,
        }


def rescore_from_log(log: list[dict], rules: Rules) -> None:
    """Recompute every round's points and scores from the log alone."""
    hands: list[list[str]] = []
    scores: list[int] | None = None
    last_group: list[str] = []
    put_this_move: list[str] = []
    for e in log:
        kind = e["event"]
        if kind == "deal":
            hands = [list(h) for h in e["hands"]]
            if scores is None:
                scores = [0] * len(hands)
            assert e["scores"] == scores
            put_this_move = []
        elif kind == "put":
            if not e.get("opening"):
                hands[e["seat"]].remove(e["card"])
            put_this_move.append(e["card"])
        elif kind in ("draw", "penalty"):
            hands[e["seat"]].append(e["card"])
        elif kind == "finish":
            last_group = [c for c in final_group([Card(c) for c in put_this_move])]  # type: ignore[misc]
            put_this_move = []
        elif kind == "round":
            assert scores is not None
            points = [sum(rules.points[Card(c).rank] for c in h) for h in hands]
            assert e["points"] == points
            new = [a + b for a, b in zip(scores, points, strict=True)]
            if e["winner"] is not None:
                assert hands[e["winner"]] == []
                if rules.jack_finish:
                    new[e["winner"]] -= rules.jack_finish * sum(1 for c in last_group if c.rank == "j")
            new = [0 if rules.burn is not None and s == rules.burn else s for s in new]
            assert e["scores"] == new
            scores = new
        elif kind == "end":
            assert e["scores"] == scores


def run(n: int, rules: Rules, seed: int, fuzz: float = 0.3) -> Driver:
    driver = Driver(n, rules, seed, fuzz)
    driver.play()
    rescore_from_log(driver.game.log, rules)
    head = {
        "event": "game",
        "version": 1,
        "game": f"fuzz-{n}-{seed}",
        "seed": seed,
        "players": [{"seat": s, "name": f"p{s}", "bot": "fuzz"} for s in range(n)],
        "rules": rules.to_dict(),
    }
    errors = independent_checker.check_lines([head, *driver.game.log])
    assert errors == [], errors[:3]
    return driver


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_playouts_contest(n):
    totals: Counter = Counter()
    refused: Counter = Counter()
    rounds = 0
    for seed in range(24):
        d = run(n, Rules(), seed=1000 * n + seed)
        totals += d.accepted
        refused += d.refused
        rounds += d.game.round
    # the fuzzing really tried refused actions of every kind
    assert refused["put"] > 100 and refused["draw"] > 10 and refused["finish"] > 10
    assert totals["finish"] > 100 and rounds >= 24


VARIANTS = [
    Rules(name="jack-finish", jack_finish=20),
    Rules(name="stacked", stacked_effects=True),
    Rules(name="winner-starts", first_player="winner"),
    Rules(name="no-burn", burn=None),
    Rules(name="short", max_moves=12, max_rounds=8),
    Rules(name="points", points={"6": 3, "a": 11}, limit=60, burn=60),
    Rules(name="big-hands", hand_size=7),
]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: r.name)
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_playouts_variants(n, rules):
    try:
        rules.check_players(n)
    except ValueError:
        pytest.skip(f"{rules.name} does not seat {n}")
    for seed in range(4):
        run(n, rules, seed=seed + 77 * n)


@pytest.mark.parametrize("n", [4, 6])
def test_playouts_teams(n):
    for seed in range(8):
        run(n, Rules(name="teams", teams=True), seed=seed)


def test_playouts_without_fuzz_are_deterministic():
    a = run(4, Rules(), seed=5, fuzz=0.0).game.log
    b = run(4, Rules(), seed=5, fuzz=0.0).game.log
    assert a == b
