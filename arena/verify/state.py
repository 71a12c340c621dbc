#!/usr/bin/env python3
"""The independent checker's game state: setup from the game line, helpers, dispatch, deals.

This package re-implements docs/rules.md from scratch (standard library only; it
deliberately imports nothing else from the ``arena`` package, so a bug in the
engine cannot hide itself here) and re-simulates every game of a JSON Lines
record (docs/record-format.md). :class:`GameState` holds one game's state and
checks the game, deal and opening lines; :class:`.phases.GameCheck` adds the
moves, effects and round and game ends.

Readings of the rules taken here (where docs/rules.md leaves room):

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

from collections import Counter, deque
from typing import Any, NoReturn

#: One parsed record line.
Event = dict[str, Any]

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

#: The type of each rule setting in a record's ``rules`` (``burn`` may also be null).
_RULE_TYPES: dict[str, type] = {
    "limit": int,
    "max_rounds": int,
    "hand_size": int,
    "first_player": str,
    "burn": int,
    "max_moves": int,
    "jack_finish": int,
    "stacked_effects": bool,
    "teams": bool,
}
_TYPE_WORDS = {int: "a whole number", str: "text", bool: "true or false"}

KNOWN_EVENTS = frozenset(
    ["game", "deal", "put", "draw", "finish", "penalty", "skip", "reshuffle", "fault", "say", "round", "end"]
)


def _rank(card: str) -> str:
    return card[:-1]


def _suit(card: str) -> str:
    return card[-1]


def _fmt_cards(counter: Counter[str]) -> str:
    return " ".join(sorted(counter.elements(), key=lambda c: DECK.index(c) if c in DECK_SET else 99)) or "-"


class _Abort(Exception):
    """Stop checking the current game (the error has been recorded)."""


class GameState:
    """Re-simulation of one game, fed one record line at a time (phases in :class:`.phases.GameCheck`)."""

    def __init__(self, errors: list[str], ln: int, ev: Event) -> None:
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

    def fatal(self, ln: int, rule: str, msg: str) -> NoReturn:
        self.err(ln, rule, msg)
        raise _Abort

    # -- game line -------------------------------------------------------------
    def _setup(self, ln: int, ev: Event) -> None:
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
        for key, want in _RULE_TYPES.items():
            value = rules[key]
            if not (type(value) is want or (key == "burn" and value is None)):
                self.fatal(ln, "format", f"rules.{key} should be {_TYPE_WORDS[want]}, not {value!r:.40}")
        table = given.get("points") or {}
        if not isinstance(table, dict):
            self.fatal(ln, "format", "rules.points is not an object")
        points = dict(DEFAULT_POINTS)
        for rank, value in table.items():
            rank = str(rank).lower()
            if rank not in points:
                self.fatal(ln, "R1.3", f"unknown rank {rank!r} in the point table")
            if type(value) is not int:
                self.fatal(ln, "format", f"rules.points[{rank!r}] should be a whole number, not {value!r:.40}")
            points[rank] = value
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
        self.stock: list[str] = []  # top first
        self.pile: list[str] = []  # top last
        self.skips = [0] * n
        self.moves = 0
        self.first = 0
        # move state
        self.mover = 0
        self.put: list[str] = []
        self.drew = False
        self.follow = ""  # suit to follow
        self.final_group: list[str] = []
        self.penalties: deque[tuple[int, str]] = deque()
        self.effect_mover = 0
        self.skip_queue: deque[int] = deque()
        self.next_mover = 0
        self.pending_reshuffle = 0  # line number of a reshuffle waiting for its draw
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
        return str(value)

    def seat(self, ln: int, value: Any) -> int:
        if type(value) is not int or not 0 <= value < self.n:
            self.fatal(ln, "R2.1", f"seat {value!r} is not a seat of this table")
        return int(value)

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

    # -- the phase handlers :class:`.phases.GameCheck` defines ---------------------------
    def on_penalty(self, ln: int, ev: Event) -> None:
        raise NotImplementedError

    def on_reshuffle(self, ln: int, ev: Event) -> None:
        raise NotImplementedError

    def on_skip(self, ln: int, ev: Event) -> None:
        raise NotImplementedError

    def close_effects(self, ln: int) -> None:
        raise NotImplementedError

    # -- dispatch -----------------------------------------------------------------
    def feed(self, ln: int, ev: Event) -> None:
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
            self.fatal(
                self.pending_reshuffle,
                "R7.1",
                f"reshuffle not followed by the draw that needed it (next: {kind} at line {ln})",
            )
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
    def in_deal(self, ln: int, kind: str, ev: Event) -> None:
        if kind == "end":
            self.fatal(
                ln,
                "R2.3",
                f"the game ends after round {self.round} but no score exceeds "
                f"{self.rules['limit']} and fewer than {self.rules['max_rounds']} rounds were played (R2.4)",
            )
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
            self.fatal(
                ln, "R3.2", f"first player of round {self.round} should be seat {first}, not {ev.get('first')!r}"
            )
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
            self.fatal(
                ln,
                "R1.1",
                f"hands + stock are not the 36-card deck: missing {_fmt_cards(missing)}, "
                f"duplicated {_fmt_cards(extra)}",
            )
        if ev.get("scores") != self.scores:
            self.fatal(
                ln, "R2.2", f"scores before round {self.round} should be {self.scores}, not {ev.get('scores')!r}"
            )
        self.hands = [list(h) for h in hands]
        self.stock = list(stock)
        self.pile = []
        self.skips = [0] * n
        self.moves = 0
        self.first = first
        self.phase = "opening"

    def in_opening(self, ln: int, kind: str, ev: Event) -> None:
        if kind != "put" or not ev.get("opening"):
            self.fatal(ln, "R3.3", f"expected the opening card's put line, got {kind}")
        if ev.get("seat") != self.first:
            self.fatal(
                ln,
                "R3.3",
                f"the opening card counts as put by the first player, seat {self.first}, not {ev.get('seat')!r}",
            )
        card = self.card(ln, ev.get("card"))
        if not self.stock or self.stock[0] != card:
            self.fatal(
                ln,
                "R3.3",
                f"opening card {card} is not the stock's top ({self.stock[0] if self.stock else 'empty stock'})",
            )
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
