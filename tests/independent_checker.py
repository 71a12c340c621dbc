#!/usr/bin/env python3
"""An independent rules checker for yard bridge game records.

This module re-implements RULES.md from scratch (standard library only; it
deliberately imports nothing from the ``arena`` package) and re-simulates
every game of a JSON Lines record (REPLAY_FORMAT.md), so that it can
cross-check the referee.

API::

    check_file(path)  -> list[str]   # error strings, [] when every game is valid
    check_lines(objs) -> list[str]   # same, for an iterable of already-parsed dicts

Each error names the game id, the line number (1-based) and the rule broken,
e.g. ``"game 3 line 57: R4.3 after 9h only rank 9 may follow, not 7c"``.

CLI::

    python tests/independent_checker.py FILE...

prints the errors and exits 1 when there are any, otherwise prints
``"N games OK"``.

Readings of the rules taken here (where RULES.md leaves room):

* The opening card is part of the first player's move (R3.3): that move has
  already "put" a card, so no voluntary draw (R4.4) is allowed in it, the
  player may finish at once, continue with the opening card's rank, and
  must cover an opening six.
* "Moves" for the R8.4 guard are finished moves (skipped turns do not
  count); the round ends with no winner right after the effects of the
  ``max_moves``-th finished move, unless that move emptied the mover's hand.
* Lost-turn counts start at zero at every deal.
* A reshuffle must be followed (fault/say lines aside) by the draw or effect
  draw that needed it. Once the stock and the pile-minus-top are both empty,
  the remaining effect draws of a move lapse (R7.2).
* Jack finish variant: ``jack_finish`` x (jacks in the winning move's final
  group) comes off the winner's *score* (before the burn test); the round's
  ``points`` entry for the winner may be either their hand points (0) or
  that amount minus the bonus. Scores are not clamped at 0.
* Stacked effects variant: the whole final group hits seat mover+1.
* Teams variant: seat i partners seat i + n/2; a seat over the limit makes
  both partners losers; places rank teams by the sum of partners' scores.
* Places (R9.1): ``1 + the number of seats strictly better``; when some seat
  has a ``fault`` of kind ``retired``, non-retired seats are placed first
  by score and retired seats after them (ranked by score among themselves).
"""

from __future__ import annotations

import json
import sys
from collections import Counter, deque
from typing import Any, Iterable, Iterator

SUITS = ("s", "c", "h", "d")
RANKS = ("6", "7", "8", "9", "10", "j", "q", "k", "a")
DECK = tuple(r + s for s in SUITS for r in RANKS)
DECK_SET = frozenset(DECK)
DECK_COUNT = Counter(DECK)

DEFAULT_POINTS = {"6": 0, "7": 0, "8": 0, "9": 0, "10": 10, "j": 20, "q": 10, "k": 10, "a": 15}
DEFAULT_RULES: dict[str, Any] = {
    "points": DEFAULT_POINTS,
    "limit": 125,
    "max_rounds": 200,
    "hand_size": 5,
    "first_player": "rotate",
    "burn": 125,
    "max_moves": 1000,
    "jack_finish": 0,
    "stacked_effects": False,
    "teams": False,
}

KNOWN_EVENTS = frozenset(
    ["game", "deal", "put", "draw", "finish", "penalty", "skip", "reshuffle", "fault", "say", "round", "end"])


def _rank(card: str) -> str:
    return card[:-1]


def _suit(card: str) -> str:
    return card[-1]


def _fmt_cards(counter: Counter) -> str:
    return " ".join(sorted(counter.elements(), key=lambda c: DECK.index(c) if c in DECK_SET else 99)) or "-"


class _Abort(Exception):
    """Stop checking the current game (the error has been recorded)."""


class _Game:
    """Re-simulation of one game, fed one record line at a time."""

    def __init__(self, errors: list[str], ln: int, ev: dict) -> None:
        self.errors = errors
        self.gid = ev.get("game", "?")
        self.done = False
        self.aborted = False
        self.phase = "deal"
        try:
            self._setup(ln, ev)
        except _Abort:
            self.aborted = True

    # -- reporting -----------------------------------------------------------
    def err(self, ln: int, rule: str, msg: str) -> None:
        self.errors.append(f"game {self.gid} line {ln}: {rule} {msg}")

    def fatal(self, ln: int, rule: str, msg: str) -> None:
        self.err(ln, rule, msg)
        raise _Abort

    # -- game line -------------------------------------------------------------
    def _setup(self, ln: int, ev: dict) -> None:
        if ev.get("version") != 1:
            self.err(ln, "format", f"game version should be 1, not {ev.get('version')!r}")
        players = ev.get("players")
        if not isinstance(players, list):
            self.fatal(ln, "R2.1", "game line has no players list")
        n = len(players)
        if not 2 <= n <= 6:
            self.fatal(ln, "R2.1", f"2 to 6 players sit at a table, not {n}")
        for i, p in enumerate(players):
            if not isinstance(p, dict) or p.get("seat") != i:
                self.fatal(ln, "R2.1", f"players[{i}] should sit at seat {i}: {p!r}")
        rules = dict(DEFAULT_RULES)
        given = ev.get("rules") or {}
        if not isinstance(given, dict):
            self.fatal(ln, "format", "rules is not an object")
        for key, value in given.items():
            if key in rules:
                rules[key] = value
        points = dict(DEFAULT_POINTS)
        for rank, value in (given.get("points") or {}).items():
            rank = str(rank).lower()
            if rank not in points:
                self.fatal(ln, "R1.3", f"unknown rank {rank!r} in the point table")
            points[rank] = int(value)
        rules["points"] = points
        if rules["first_player"] not in ("rotate", "winner"):
            self.fatal(ln, "R3.2", f"first_player must be rotate or winner, not {rules['first_player']!r}")
        hs = rules["hand_size"]
        if not isinstance(hs, int) or hs < 1 or n * hs + 1 > 36:
            self.fatal(ln, "R3.1", f"{n} hands of {hs} and an opening card do not fit in 36 cards")
        if rules["teams"] and n not in (4, 6):
            self.fatal(ln, "teams", f"the teams variant needs 4 or 6 players, not {n}")
        self.rules = rules
        self.n = n
        self.scores = [0] * n
        self.round = 0
        self.last_winner: int | None = None
        self.retired: set[int] = set()
        self.over = False
        # round state
        self.hands: list[list[str]] = [[] for _ in range(n)]
        self.stock: list[str] = []   # top first
        self.pile: list[str] = []    # top last
        self.skips = [0] * n
        self.moves = 0
        self.first = 0
        # move state
        self.mover = 0
        self.put: list[str] = []
        self.drew = False
        self.follow = ""             # suit to follow
        self.final_group: list[str] = []
        self.penalties: deque[tuple[int, str]] = deque()
        self.effect_mover = 0
        self.skip_queue: deque[int] = deque()
        self.next_mover = 0
        self.pending_reshuffle = 0   # line number of a reshuffle waiting for its draw
        self.expected_winner: int | None = None

    # -- helpers -----------------------------------------------------------------
    @property
    def top(self) -> str:
        return self.pile[-1]

    def can_draw(self) -> bool:
        """R7.1/R7.2: a card can be drawn, from the stock or after a reshuffle."""
        return bool(self.stock) or len(self.pile) > 1

    def matches(self, card: str) -> bool:
        """R4.1 against the current top and suit to follow."""
        return _rank(card) == "j" or _suit(card) == self.follow or _rank(card) == _rank(self.top)

    def has_cover(self) -> bool:
        """R5.2: the mover holds a card that covers the six on top."""
        return any(self.matches(c) for c in self.hands[self.mover])

    def card(self, ln: int, value: Any, what: str = "card") -> str:
        if not isinstance(value, str) or value not in DECK_SET:
            self.fatal(ln, "R1.2", f"{what} {value!r} is not a card written as in R1.2")
        return value

    def seat(self, ln: int, value: Any) -> int:
        if type(value) is not int or not 0 <= value < self.n:
            self.fatal(ln, "R2.1", f"seat {value!r} is not a seat of this table")
        return value

    def take(self, ln: int, card: str, who: str) -> None:
        """The drawn/penalty card must be the stock's top (R3.1, R7.1)."""
        if not self.stock:
            if len(self.pile) > 1:
                self.fatal(ln, "R7.1", f"{who} draws from an empty stock without a reshuffle line")
            self.fatal(ln, "R7.2", f"{who} draws but no card can be drawn (stock empty, pile has only the top)")
        if self.stock[0] != card:
            self.fatal(ln, "R3.1", f"{who} draws {card} but the stock's top is {self.stock[0]}")
        self.stock.pop(0)

    def check_cards(self, ln: int) -> None:
        """All 36 cards accounted for: hands + stock + pile."""
        everything = Counter(self.stock) + Counter(self.pile)
        for h in self.hands:
            everything.update(h)
        if everything != DECK_COUNT:
            missing = DECK_COUNT - everything
            extra = everything - DECK_COUNT
            self.fatal(ln, "R1.1", f"cards not accounted for: missing {_fmt_cards(missing)}, extra {_fmt_cards(extra)}")

    # -- dispatch -----------------------------------------------------------------
    def feed(self, ln: int, ev: dict) -> None:
        kind = ev.get("event")
        if kind not in KNOWN_EVENTS:
            self.fatal(ln, "format", f"unknown event {kind!r}")
        if kind in ("fault", "say"):
            seat = self.seat(ln, ev.get("seat"))
            if kind == "fault" and ev.get("kind") == "retired":
                self.retired.add(seat)
            return
        if kind == "game":  # handled by the caller
            raise AssertionError
        if self.pending_reshuffle and kind not in ("draw", "penalty"):
            self.fatal(self.pending_reshuffle, "R7.1",
                       f"reshuffle not followed by the draw that needed it (next: {kind} at line {ln})")
        if self.phase == "effects":
            if kind == "penalty":
                self.on_penalty(ln, ev)
                return
            if kind == "reshuffle" and self.penalties:
                self.on_reshuffle(ln, ev)
                return
            # anything else (a reshuffle included) belongs to what comes after the effects
            self.close_effects(ln)
        if self.phase == "skips":
            if kind == "skip":
                self.on_skip(ln, ev)
                return
            if self.skip_queue:
                self.fatal(ln, "R6.5", f"seat {self.skip_queue[0]} has a lost turn: expected a skip line, got {kind}")
            self.start_move(self.next_mover)
        handler = getattr(self, f"in_{self.phase}")
        handler(ln, kind, ev)
        if self.phase not in ("end", "done"):
            self.check_cards(ln)

    # -- phases -----------------------------------------------------------------
    def in_deal(self, ln: int, kind: str, ev: dict) -> None:
        if kind == "end":
            self.fatal(ln, "R2.3", f"the game ends after round {self.round} but no score exceeds "
                       f"{self.rules['limit']} and fewer than {self.rules['max_rounds']} rounds were played (R2.4)")
        if kind != "deal":
            self.fatal(ln, "R3", f"expected a deal line, got {kind}")
        n, hs = self.n, self.rules["hand_size"]
        self.round += 1
        if ev.get("round") != self.round:
            self.fatal(ln, "R2.2", f"deal of round {ev.get('round')!r}, expected round {self.round}")
        if self.rules["first_player"] == "winner" and self.last_winner is not None:
            first = self.last_winner
        else:
            first = (self.round - 1) % n
        if ev.get("first") != first:
            self.fatal(ln, "R3.2", f"first player of round {self.round} should be seat {first}, not {ev.get('first')!r}")
        hands, stock = ev.get("hands"), ev.get("stock")
        if not isinstance(hands, list) or len(hands) != n or not all(isinstance(h, list) for h in hands):
            self.fatal(ln, "R3.1", f"deal needs {n} hands")
        for s, h in enumerate(hands):
            if len(h) != hs:
                self.fatal(ln, "R3.1", f"seat {s} is dealt {len(h)} cards, not {hs}")
        if not isinstance(stock, list):
            self.fatal(ln, "R3.1", "deal has no stock list")
        everything = [c for h in hands for c in h] + list(stock)
        for c in everything:
            self.card(ln, c, "dealt card")
        got = Counter(everything)
        if got != DECK_COUNT:
            missing, extra = DECK_COUNT - got, got - DECK_COUNT
            self.fatal(ln, "R1.1", f"hands + stock are not the 36-card deck: missing {_fmt_cards(missing)}, "
                       f"duplicated {_fmt_cards(extra)}")
        if ev.get("scores") != self.scores:
            self.fatal(ln, "R2.2", f"scores before round {self.round} should be {self.scores}, not {ev.get('scores')!r}")
        self.hands = [list(h) for h in hands]
        self.stock = list(stock)
        self.pile = []
        self.skips = [0] * n
        self.moves = 0
        self.first = first
        self.phase = "opening"

    def in_opening(self, ln: int, kind: str, ev: dict) -> None:
        if kind != "put" or not ev.get("opening"):
            self.fatal(ln, "R3.3", f"expected the opening card's put line, got {kind}")
        if ev.get("seat") != self.first:
            self.fatal(ln, "R3.3", f"the opening card counts as put by the first player, seat {self.first}, "
                       f"not {ev.get('seat')!r}")
        card = self.card(ln, ev.get("card"))
        if not self.stock or self.stock[0] != card:
            self.fatal(ln, "R3.3", f"opening card {card} is not the stock's top "
                       f"({self.stock[0] if self.stock else 'empty stock'})")
        self.stock.pop(0)
        self.pile = [card]
        self.start_move(self.first)
        self.put = [card]
        self.follow = _suit(card)
        if _rank(card) == "j":
            if ev.get("suit") != _suit(card):
                self.fatal(ln, "R3.3", f"an opening jack orders its own suit {_suit(card)}, not {ev.get('suit')!r}")
        elif ev.get("suit") is not None:
            self.err(ln, "R6.4", f"only a jack orders a suit; {card} has suit {ev.get('suit')!r}")

    def start_move(self, seat: int) -> None:
        self.mover = seat
        self.put = []
        self.drew = False
        self.phase = "move"

    def in_move(self, ln: int, kind: str, ev: dict) -> None:
        if kind == "reshuffle":
            self.on_reshuffle(ln, ev)
            return
        if kind not in ("put", "draw", "finish"):
            self.fatal(ln, "R4", f"seat {self.mover} is moving: a {kind} line cannot come now")
        seat = self.seat(ln, ev.get("seat"))
        if seat != self.mover:
            self.fatal(ln, "R2.1", f"seat {seat} acts ({kind}) but it is seat {self.mover}'s move")
        getattr(self, f"on_{kind}")(ln, ev)

    def on_put(self, ln: int, ev: dict) -> None:
        if ev.get("opening"):
            self.fatal(ln, "R3.3", "only the round's opening card is marked opening")
        card = self.card(ln, ev.get("card"))
        hand = self.hands[self.mover]
        if card not in hand:
            self.fatal(ln, "R4", f"seat {self.mover} puts {card}, which is not in their hand")
        if not self.put:
            if not self.matches(card):
                self.fatal(ln, "R4.2", f"first card {card} does not match top {self.top} "
                           f"(suit to follow {self.follow}, rank {_rank(self.top)}, or a jack)")
        elif _rank(self.put[-1]) == "6":
            if not self.matches(card):
                self.fatal(ln, "R5.2", f"{card} does not cover the six {self.top} (its suit, a six or a jack)")
        elif _rank(card) != _rank(self.put[-1]):
            self.fatal(ln, "R4.3", f"after {self.put[-1]} only rank {_rank(self.put[-1])} may follow, not {card}")
        if _rank(card) == "j":
            suit = ev.get("suit")
            if suit not in SUITS:
                self.fatal(ln, "R6.4", f"jack {card} must order one of s, c, h, d, not {suit!r}")
            self.follow = suit
        else:
            if ev.get("suit") is not None:
                self.err(ln, "R6.4", f"only a jack orders a suit; {card} has suit {ev.get('suit')!r}")
            self.follow = _suit(card)
        hand.remove(card)
        self.pile.append(card)
        self.put.append(card)

    def on_draw(self, ln: int, ev: dict) -> None:
        card = self.card(ln, ev.get("card"))
        if self.put and _rank(self.put[-1]) == "6":
            if self.has_cover():
                self.fatal(ln, "R5.3", f"seat {self.mover} draws while holding a card that covers the six {self.top}")
        elif self.put:
            self.fatal(ln, "R4.4", f"seat {self.mover} draws after putting a card in this move"
                       + (" (the opening card counts as put, R3.3)" if len(self.put) == 1 and self.moves == 0 else ""))
        elif self.drew:
            self.fatal(ln, "R4.4", f"seat {self.mover} draws a second time in one move")
        if not self.can_draw():
            self.fatal(ln, "R7.2", f"seat {self.mover} draws but no card can be drawn")
        self.take(ln, card, f"seat {self.mover}")
        self.pending_reshuffle = 0
        if not self.put:
            self.drew = True
        self.hands[self.mover].append(card)

    def on_finish(self, ln: int, ev: dict) -> None:
        if self.put:
            if _rank(self.put[-1]) == "6" and (self.can_draw() or self.has_cover()):
                self.fatal(ln, "R5.1", f"seat {self.mover} finishes with its own six {self.top} uncovered "
                           f"({'a cover is in hand' if self.has_cover() else 'a card can still be drawn'})")
        elif not self.drew and self.can_draw():
            self.fatal(ln, "R4.5", f"seat {self.mover} finishes without putting or drawing a card")
        self.moves += 1
        mover, n = self.mover, self.n
        group: list[str] = []
        for c in reversed(self.put):
            if group and _rank(c) != _rank(group[0]):
                break
            group.insert(0, c)
        self.final_group = group
        self.effect_mover = mover
        self.penalties = deque()
        rank = _rank(group[-1]) if group else ""
        k = len(group)
        if rank in ("7", "8", "a"):
            if self.rules["stacked_effects"]:
                t = (mover + 1) % n
                if rank == "7":
                    self.penalties.extend([(t, "7")] * k)
                elif rank == "8":
                    self.penalties.extend([(t, "8")] * (2 * k))
                    self.skips[t] += 1
                else:
                    self.skips[t] += k
            else:
                others = [(mover + 1 + i) % n for i in range(n - 1)]
                for i in range(k):
                    t = others[i % len(others)]
                    if rank == "7":
                        self.penalties.append((t, "7"))          # R6.1
                    elif rank == "8":
                        self.penalties.extend([(t, "8")] * 2)    # R6.2
                        self.skips[t] += 1
                    else:
                        self.skips[t] += 1                       # R6.3
        self.phase = "effects"

    # -- effects, skips --------------------------------------------------------
    def on_penalty(self, ln: int, ev: dict) -> None:
        seat = self.seat(ln, ev.get("seat"))
        card = self.card(ln, ev.get("card"))
        if not self.penalties:
            self.fatal(ln, "R6", f"penalty for seat {seat} but the move's final group "
                       f"({' '.join(self.final_group) or 'nothing'}) leaves no effect draw")
        target, rank = self.penalties[0]
        if seat != target:
            self.fatal(ln, "R6", f"effect draw for seat {seat}, but the next target is seat {target} "
                       f"(final group {' '.join(self.final_group)} of seat {self.effect_mover})")
        if str(ev.get("rank")) != rank:
            self.fatal(ln, "R6.5", f"effect draw marked rank {ev.get('rank')!r}, expected {rank!r}")
        self.take(ln, card, f"penalty seat {seat}")
        self.pending_reshuffle = 0
        self.penalties.popleft()
        self.hands[seat].append(card)

    def close_effects(self, ln: int) -> None:
        """The move's effect lines are over: check nothing is missing, then pass on."""
        if self.penalties:
            if self.can_draw():
                t, rank = self.penalties[0]
                self.fatal(ln, "R6.5", f"missing effect draw ({rank}) for seat {t}: {len(self.penalties)} still due "
                           "and a card can be drawn")
            self.penalties.clear()   # R7.2: they lapse
        mover = self.effect_mover
        if not self.hands[mover]:
            self.expected_winner = mover
            self.phase = "round"
        elif self.moves >= self.rules["max_moves"]:
            self.expected_winner = None
            self.phase = "round"
        else:
            n = self.n
            seat = (mover + 1) % n
            queue: deque[int] = deque()
            while self.skips[seat] > 0:
                self.skips[seat] -= 1
                queue.append(seat)
                seat = (seat + 1) % n
            self.skip_queue = queue
            self.next_mover = seat
            self.phase = "skips"

    def on_skip(self, ln: int, ev: dict) -> None:
        seat = self.seat(ln, ev.get("seat"))
        if not self.skip_queue:
            self.fatal(ln, "R6.5", f"skip for seat {seat}, but seat {self.next_mover} is to move with no lost turn")
        if seat != self.skip_queue[0]:
            self.fatal(ln, "R6.5", f"skip for seat {seat}, but seat {self.skip_queue[0]} is the next with a lost turn")
        self.skip_queue.popleft()

    def on_reshuffle(self, ln: int, ev: dict) -> None:
        if self.stock:
            self.fatal(ln, "R7.1", f"reshuffle while the stock still has {len(self.stock)} cards")
        if len(self.pile) <= 1:
            self.fatal(ln, "R7.2", "reshuffle but the pile has no card besides the top")
        new = ev.get("stock")
        if not isinstance(new, list):
            self.fatal(ln, "R7.1", "reshuffle without a stock list")
        for c in new:
            self.card(ln, c, "reshuffled card")
        want = Counter(self.pile[:-1])
        got = Counter(new)
        if got != want:
            self.fatal(ln, "R7.1", f"new stock is not the pile but the top: missing {_fmt_cards(want - got)}, "
                       f"extra {_fmt_cards(got - want)}")
        self.stock = list(new)
        self.pile = [self.pile[-1]]
        self.pending_reshuffle = ln

    # -- round and game end ---------------------------------------------------
    def in_round(self, ln: int, kind: str, ev: dict) -> None:
        if kind != "round":
            if self.expected_winner is None:
                self.fatal(ln, "R8.4", f"the round reached {self.rules['max_moves']} moves and must end; got {kind}")
            self.fatal(ln, "R8.1", f"seat {self.expected_winner} emptied their hand: the round must end; got {kind}")
        rules, n = self.rules, self.n
        problems: list[tuple[str, str]] = []
        if ev.get("round") != self.round:
            problems.append(("R8", f"round line says round {ev.get('round')!r}, expected {self.round}"))
        winner = self.expected_winner
        if ev.get("winner") != winner:
            rule = "R8.4" if winner is None or ev.get("winner") is None else "R8.1"
            problems.append((rule, f"winner should be {winner!r}, not {ev.get('winner')!r}"))
        pts = rules["points"]
        points = [sum(pts[_rank(c)] for c in h) for h in self.hands]
        raw = [self.scores[s] + points[s] for s in range(n)]
        bonus = 0
        if winner is not None and rules["jack_finish"]:
            bonus = rules["jack_finish"] * sum(1 for c in self.final_group if _rank(c) == "j")
            raw[winner] -= bonus
        burn = rules["burn"]
        burned = [s for s in range(n) if burn is not None and raw[s] == burn]
        scores = [0 if s in burned else raw[s] for s in range(n)]
        got_points = ev.get("points")
        ok_points = isinstance(got_points, list) and len(got_points) == n and all(
            got_points[s] == points[s] or (bonus and s == winner and got_points[s] == points[s] - bonus)
            for s in range(n))
        if not ok_points:
            problems.append(("R8.2", f"points should be {points}, not {got_points!r}"))
        got_scores = ev.get("scores")
        if got_scores != scores:
            rule = "R8.2"
            if isinstance(got_scores, list) and len(got_scores) == n:
                bad = [s for s in range(n) if got_scores[s] != scores[s]]
                if any(s in burned or (burn is not None and got_scores[s] in (0, burn)) for s in bad):
                    rule = "R8.3"
            problems.append((rule, f"scores should be {scores}, not {got_scores!r}"))
        got_burned = ev.get("burned")
        if not isinstance(got_burned, list) or sorted(got_burned, key=str) != burned:
            problems.append(("R8.3", f"burned should be {burned}, not {got_burned!r}"))
        if problems:
            for rule, msg in problems:
                self.err(ln, rule, msg)
            raise _Abort
        self.scores = scores
        self.last_winner = winner
        self.over = any(s > rules["limit"] for s in scores) or self.round >= rules["max_rounds"]
        self.phase = "end" if self.over else "deal"

    def in_end(self, ln: int, kind: str, ev: dict) -> None:
        if kind != "end":
            if any(s > self.rules["limit"] for s in self.scores):
                self.fatal(ln, "R2.3", f"a score exceeds {self.rules['limit']}: the game must end, got {kind}")
            self.fatal(ln, "R2.4", f"{self.rules['max_rounds']} rounds played: the game must end, got {kind}")
        n, limit = self.n, self.rules["limit"]
        if ev.get("scores") != self.scores:
            self.err(ln, "R9.1", f"final scores should be {self.scores}, not {ev.get('scores')!r}")
        losers = {s for s in range(n) if self.scores[s] > limit}
        half = n // 2
        if self.rules["teams"]:
            losers |= {(s + half) % n for s in losers}
            key = [self.scores[s % half] + self.scores[s % half + half] for s in range(n)]
        else:
            key = list(self.scores)
        got_losers = ev.get("losers")
        if not isinstance(got_losers, list) or sorted(got_losers, key=str) != sorted(losers):
            self.err(ln, "R9.1", f"losers should be {sorted(losers)}, not {got_losers!r}")
        keys = [(s in self.retired, key[s]) for s in range(n)]
        places = [1 + sum(1 for other in keys if other < keys[s]) for s in range(n)]
        if ev.get("places") != places:
            note = f" (retired seats {sorted(self.retired)} placed last)" if self.retired else ""
            self.err(ln, "R9.1", f"places should be {places}{note}, not {ev.get('places')!r}")
        if ev.get("rounds") != self.round:
            self.err(ln, "R9.1", f"rounds should be {self.round}, not {ev.get('rounds')!r}")
        self.phase = "done"
        self.done = True

    def in_done(self, ln: int, kind: str, ev: dict) -> None:  # pragma: no cover - caller handles
        self.fatal(ln, "format", f"{kind} line after the game's end line")

    def in_effects(self, ln: int, kind: str, ev: dict) -> None:  # pragma: no cover - resolved in feed
        raise AssertionError

    in_skips = in_effects


# -- drivers -----------------------------------------------------------------------
def _check(pairs: Iterable[tuple[int, Any]], prefix: str = "") -> tuple[list[str], int]:
    """Check (line number, object-or-exception-text) pairs; return (errors, games seen)."""
    errors: list[str] = []
    game: _Game | None = None
    games = 0
    for ln, ev in pairs:
        if isinstance(ev, _BadLine):
            errors.append(f"{prefix}line {ln}: format {ev.reason}")
            if game is not None and not game.done:
                game.aborted = True
            continue
        if not isinstance(ev, dict) or "event" not in ev:
            errors.append(f"{prefix}line {ln}: format not an event object: {ev!r:.80}")
            if game is not None and not game.done:
                game.aborted = True
            continue
        if ev["event"] == "game":
            if game is not None and not game.done and not game.aborted:
                errors.append(f"{prefix}game {game.gid} line {ln}: R9 game has no end line before the next game")
            game = _Game(errors, ln, ev)
            games += 1
            continue
        if game is None:
            errors.append(f"{prefix}line {ln}: format {ev['event']} line before any game line")
            game = None
            continue
        if game.done:
            errors.append(f"{prefix}game {game.gid} line {ln}: format {ev['event']} line after the game's end line")
            game.aborted, game.done = True, False   # report once
            continue
        if game.aborted:
            continue
        try:
            game.feed(ln, ev)
        except _Abort:
            game.aborted = True
    if game is not None and not game.done and not game.aborted:
        errors.append(f"{prefix}game {game.gid}: R9 record ends before the game's end line")
    if prefix:
        errors = [e if e.startswith(prefix) else prefix + e for e in errors]
    return errors, games


class _BadLine:
    def __init__(self, reason: str) -> None:
        self.reason = reason


def _read(path: str) -> Iterator[tuple[int, Any]]:
    with open(path, encoding="utf-8") as fh:
        for ln, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                yield ln, json.loads(text)
            except json.JSONDecodeError as exc:
                yield ln, _BadLine(f"not JSON: {exc}")


def check_lines(lines: Iterable[dict]) -> list[str]:
    """Check already-parsed record objects (line numbers count from 1)."""
    return _check(enumerate(lines, 1))[0]


def check_file(path: str) -> list[str]:
    """Check every game of a JSON Lines record file."""
    return _check(_read(path))[0]


def main(argv: list[str] | None = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print("usage: python tests/independent_checker.py FILE...", file=sys.stderr)
        return 2
    all_errors: list[str] = []
    total = 0
    for path in paths:
        try:
            errors, games = _check(_read(path), prefix=f"{path}: " if len(paths) > 1 else "")
        except OSError as exc:
            errors, games = [f"{path}: {exc}"], 0
        all_errors += errors
        total += games
    for e in all_errors:
        print(e)
    if all_errors:
        return 1
    print(f"{total} games OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
