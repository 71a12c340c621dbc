"""The referee's engine: the full state of one game and the rules that move it.

Reading order follows docs/rules.md: dealing (R3), a move's actions (R4, R5, via
:class:`~arena.game.moves.Move`), effects at the finish (R6), the stock running out
(R7), the end of a round (R8) and of the game (R9).

The engine holds hidden information (hands, the stock's order, the seed).
Bots never see it: they get a :class:`~arena.botapi.turn.Turn` built for their seat.
Every action appends one event to :attr:`Game.log` in the game-record format
(docs/record-format.md), hidden cards included.

Checked path: :meth:`Game.put`, :meth:`Game.draw`, :meth:`Game.finish` raise
:class:`~arena.errors.IllegalMove` and change nothing when an action is not
allowed. Unchecked path, for trusted internal callers only:
:meth:`Game.put_unchecked`, :meth:`Game.draw_unchecked`,
:meth:`Game.finish_unchecked` apply an action the caller has already checked
against the move in progress (``Move.check_put``...), as python-chess's
``Board.push`` applies a move without checking it. The referee's in-process
table is their one caller outside the engine (a :class:`~arena.botapi.turn.Turn`
checks each action first); an unchecked action the rules forbid corrupts the
game. tests/test_layers.py keeps every other module, the sandbox's above all,
off this path.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import IllegalMove
from .cards import DECK, SUITS, Card, to_card, to_suit
from .events import Event, PutEvent, SayEvent
from .moves import Move
from .rules import CONTEST, Rules
from .seeds import SeedKey, derive_seed, shuffle

_EFFECT_RANKS = frozenset(("7", "8", "a"))

#: Bytes of game record a whole table may fill with ``say`` lines in one game, and with
#: printed output (sandboxed bots' ``print``): each seat gets ``1/n`` of each. With every
#: seat at both caps a record grows by at most 12 KiB (plus two marker lines a seat), under
#: the median record of 2 to 6 reference bots (17.7 to 22.5 KB), so at most about twice a
#: normal game's size (docs/security/forward-model.md, "Bounded records").
TABLE_SAY_BYTES = 8192
TABLE_OUTPUT_BYTES = 4096
_SAY_MARK = "[say cap reached]"
_OUTPUT_MARK = "[output cap reached]"


def record_bytes(event: Mapping[str, Any]) -> int:
    """The bytes ``event`` takes in a record file (one compact JSON line, ASCII escapes)."""
    return len(json.dumps(event, separators=(",", ":"))) + 1


def _targets(n: int, mover: int, k: int) -> tuple[int, ...]:
    """R6: at a table of ``n``, the next ``k`` players after ``mover``, skipping the mover, cycling."""
    return tuple((mover + 1 + i % (n - 1)) % n for i in range(k))


#: :func:`_targets` of every table size, mover and final group (at most a rank's 4 cards), made once.
_TARGETS = {n: [[_targets(n, m, k) for k in range(5)] for m in range(n)] for n in range(2, 7)}


@dataclass(frozen=True)
class RoundResult:
    """The end of one round (R8): per seat, points added and scores after burns."""

    round: int
    winner: int | None
    points: tuple[int, ...]
    scores: tuple[int, ...]
    burned: tuple[int, ...]


@dataclass(frozen=True)
class GameResult:
    """The end of the game (R9): final scores, losers (seats), places (per seat)."""

    scores: tuple[int, ...]
    losers: tuple[int, ...]
    places: tuple[int, ...]
    rounds: int


def place_seats(
    scores: list[int] | tuple[int, ...], last: set[int] | frozenset[int] = frozenset(), teams: bool = False
) -> tuple[int, ...]:
    """R9.1 places: by final score, lowest first, equal scores share the better place.

    Seats in ``last`` (retired bots) come after all others. With ``teams``,
    partners (seat i and i + n/2) share their team's summed score.
    """
    n = len(scores)
    key_scores = list(scores)
    if teams:
        half = n // 2
        key_scores = [scores[s % half] + scores[s % half + half] for s in range(n)]
    keys = [(s in last, key_scores[s]) for s in range(n)]
    return tuple(1 + sum(1 for k in keys if k < keys[s]) for s in range(n))


class Game:
    """One game of yard bridge for ``n`` seats under ``rules``, every shuffle from ``seed``.

    Use::

        game = Game(4, seed=7)
        game.start_round()
        while not game.over:
            move = game.move            # game.mover is to act
            ...game.put(card) / game.draw() / game.finish()...
            if not game.in_round and not game.over:
                game.start_round()
    """

    def __init__(
        self, n: int, rules: Rules = CONTEST, seed: Any = 0, on_event: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        rules.check_players(n)
        self.n = n
        self.rules = rules
        self.seed = seed
        self.scores = [0] * n
        self.round = 0
        self.over = False
        self.in_round = False
        self.result: GameResult | None = None
        self.log: list[dict[str, Any]] = []
        self.on_event = on_event
        # Hot path: with no listener, emitting an event is just an append. Typed as taking an
        # Event, so that mypy checks every literal the engine emits against arena/game/events.py;
        # the log's readers see them as the plain dicts they are at run time.
        self._emit: Callable[[Event], None] = (
            self.log.append if on_event is None else self._emit_and_call  # type: ignore[assignment]
        )
        self.hands: list[list[Card]] = [[] for _ in range(n)]
        self.stock: list[Card] = []  # top at the END (pop() draws)
        self.pile: list[Card] = []  # the physical pile, top at the end
        self.round_pile: list[Card] = []  # every card put this round, oldest first
        self.skips = [0] * n
        self.drawn = [0] * n  # cards drawn this round (public, R10)
        self.mover = 0
        self.moves = 0  # moves finished this round (R8.4)
        self.move: Move = None  # type: ignore[assignment]
        self.last_winner: int | None = None
        # Seeded at every deal (start_round) before its first draw; made unseeded (seeding costs).
        self.rng = random.Random.__new__(random.Random)
        self._round_key = SeedKey(seed)  # each round's seed: derive_seed(seed, "round", r)
        self.round_results: list[RoundResult] = []
        #: Record bytes left per seat for say lines (index 2s) and printed output (2s + 1).
        self.text_left: list[int] = [TABLE_SAY_BYTES // n, TABLE_OUTPUT_BYTES // n] * n

    # -- records -------------------------------------------------------------
    def _emit_and_call(self, event: Event) -> None:
        self.log.append(event)  # type: ignore[arg-type]
        self.on_event(event)  # type: ignore[misc, arg-type]

    def record(self, event: Event) -> None:
        """Write an event the referee makes itself (the game header, a fault) into the record,
        in order with the engine's own, and pass it to the listener."""
        self._emit(event)

    def say(self, seat: int, text: str, output: bool = False) -> None:
        """Record ``seat``'s ``say`` text (with ``output``: its printed output) within the seat's
        share of :data:`TABLE_SAY_BYTES` (:data:`TABLE_OUTPUT_BYTES`) for this game. Past it,
        one marker line is recorded, then nothing: the say that does not fit is left out (a
        say is short), output that does not fit is cut to what does. The one way bot text
        enters a record, in-process and sandboxed alike."""
        i = 2 * seat + (1 if output else 0)
        left = self.text_left[i]
        if left <= 0:
            return
        event: SayEvent = {"event": "say", "seat": seat, "text": text}
        if output:
            event["output"] = True
        cost = record_bytes(event)
        mark: SayEvent = {"event": "say", "seat": seat, "text": _OUTPUT_MARK if output else _SAY_MARK}
        if output:
            mark["output"] = True
        mark["capped"] = True
        room = left - record_bytes(mark)
        if cost <= room:
            self.text_left[i] = left - cost
            self._emit(event)
            return
        lo, hi = 0, len(text) if output else 0  # the longest prefix of the output that fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            event["text"] = text[:mid]
            if record_bytes(event) <= room:
                lo = mid
            else:
                hi = mid - 1
        if lo:
            event["text"] = text[:lo]
            self._emit(event)
        self._emit(mark)
        self.text_left[i] = 0

    # -- R3 dealing ----------------------------------------------------------
    def first_player(self) -> int:
        """R3.2: seat (r-1) mod n, or the previous round's winner when the knob says so."""
        if self.rules.first_player == "winner" and self.last_winner is not None:
            return self.last_winner
        return (self.round - 1) % self.n

    def start_round(self) -> None:
        """Deal a new round (R3) and turn the opening card; the first player is to move."""
        if self.over:
            raise RuntimeError("the game is over")
        self.round += 1
        n, size = self.n, self.rules.hand_size
        self.rng.seed(self._round_key.derive("round", self.round))
        deck = list(DECK)
        shuffle(self.rng, deck)  # random.Random.shuffle, draw for draw (arena/game/seeds.py)
        # deck[0] is the top of the shuffled deck; hands take cards from the top.
        self.hands = [deck[s * size : (s + 1) * size] for s in range(n)]
        rest = deck[n * size :]  # the stock, top first
        first = self.first_player()
        self._emit(
            {
                "event": "deal",
                "round": self.round,
                "first": first,
                "hands": [[c._text for c in h] for h in self.hands],
                "stock": [c._text for c in rest],
                "scores": list(self.scores),
            }
        )
        rest.reverse()
        self.stock = rest
        self.skips = [0] * n
        self.drawn = [0] * n
        self.moves = 0
        self.in_round = True
        opening = self.stock.pop()  # R3.3
        self.pile = [opening]
        self.round_pile = [opening]
        self.mover = first
        event: PutEvent = {"event": "put", "seat": first, "card": opening._text, "opening": True}
        if opening.rank == "j":
            event["suit"] = opening.suit  # R3.3: an opening jack orders its own suit
        self._emit(event)
        self.move = Move(
            first,
            self.hands[first],
            opening,
            opening.suit,
            put=[opening],
            stock=len(self.stock),
            pile_size=1,
            first=True,
        )

    # -- R7 drawing ------------------------------------------------------------
    def _take(self) -> Card | None:
        """Take the stock's top card, reshuffling the pile first when needed (R7.1).
        None when no card can be drawn (R7.2)."""
        if not self.stock:
            if len(self.pile) <= 1:
                return None
            top = self.pile[-1]
            new = self.pile[:-1]
            shuffle(self.rng, new)  # new[0] is the new stock's top
            self._emit({"event": "reshuffle", "stock": [c._text for c in new]})
            new.reverse()
            self.stock = new
            self.pile = [top]
            self.move.pile_size = 1
        return self.stock.pop()

    # -- R4/R5 actions (checked path) ----------------------------------------
    def put(self, card: Card | str, suit: str | None = None) -> None:
        """The mover puts ``card`` (a Card or its text); a jack orders ``suit``
        (default its own, R6.4). Anything else (bots send what they like) is
        refused with IllegalMove.

        :raises IllegalMove: the put breaks R4.2, R4.3 or R5.2 (nothing changes).
        """
        if not self.in_round:
            raise IllegalMove("R8.1", "the round is over")
        card = to_card(card)
        suit = to_suit(suit) if card.rank == "j" else None
        self.move.check_put(card, suit)
        self.put_unchecked(card, suit)

    def draw(self) -> Card:
        """The mover draws one card (R4.4, R5.3) and gets it.

        :raises IllegalMove: no draw is allowed now (nothing changes).
        """
        if not self.in_round:
            raise IllegalMove("R8.1", "the round is over")
        self.move.check_draw()
        return self.draw_unchecked()

    def finish(self) -> RoundResult | None:
        """End the move: effects (R6), then the round's end (R8) or the next mover.

        Returns the round's result when this move ended the round.
        :raises IllegalMove: the move may not end yet (R4.5, R5.1).
        """
        if not self.in_round:
            raise IllegalMove("R8.1", "the round is over")
        self.move.check_finish()
        return self.finish_unchecked()

    # -- the unchecked path: only after the Move's own check passed ----------
    def put_unchecked(self, card: Card, suit: str | None) -> None:
        """Put ``card`` (a jack orders ``suit``, None: its own) without any check: for a trusted
        caller that checked it with ``self.move.check_put(card, suit)`` in this move, in a round."""
        move = self.move
        move.hand.remove(card)
        move.put.append(card)
        move.top = card
        if card.rank == "j":
            ordered = suit if suit is not None else card.suit
            move.suit = ordered
            self._emit({"event": "put", "seat": self.mover, "card": card._text, "suit": ordered})
        else:
            move.suit = card.suit
            self._emit({"event": "put", "seat": self.mover, "card": card._text})
        self.pile.append(card)
        self.round_pile.append(card)
        move.pile_size = len(self.pile)

    def draw_unchecked(self) -> Card:
        """Draw for the mover without any check (the caller ran ``self.move.check_draw()``)."""
        move = self.move
        card = self._take()
        assert card is not None  # the check saw a drawable card
        if not move.put:
            move.drew = True
        move.hand.append(card)
        move.stock = len(self.stock)
        self.drawn[self.mover] += 1
        self._emit({"event": "draw", "seat": self.mover, "card": card._text})
        return card

    def finish_unchecked(self) -> RoundResult | None:
        """End the move without any check (the caller ran ``self.move.check_finish()``)."""
        move = self.move
        move.finished = True
        mover = self.mover
        self.moves += 1
        self._emit({"event": "finish", "seat": mover})
        put = move.put
        if put and put[-1].rank in _EFFECT_RANKS:
            self._effects(mover, put)
        if not self.hands[mover]:
            return self._end_round(mover)
        if self.moves >= self.rules.max_moves:
            return self._end_round(None)
        self._next_mover(mover)
        return None

    # -- R6 effects ----------------------------------------------------------
    @staticmethod
    def final_group(put: list[Card]) -> list[Card]:
        """R6: the run of same-rank cards at the end of a move's puts."""
        if not put:
            return []
        rank = put[-1].rank
        i = len(put) - 1
        while i > 0 and put[i - 1].rank == rank:
            i -= 1
        return put[i:]

    def targets(self, mover: int, k: int) -> list[int]:
        """R6: the next ``k`` players after ``mover``, skipping the mover, cycling."""
        return list(_TARGETS[self.n][mover][k] if k < 5 else _targets(self.n, mover, k))

    def _effects(self, mover: int, put: list[Card]) -> None:
        if not put:
            return
        rank = put[-1].rank
        if rank not in ("7", "8", "a"):
            return  # sixes never have an effect; a jack's order is already the suit to follow
        k = len(self.final_group(put))
        if self.rules.stacked_effects:
            target = (mover + 1) % self.n
            if rank == "7":
                self._penalty(target, k, "7")
            elif rank == "8":
                self._penalty(target, 2 * k, "8")
                self.skips[target] += 1
            else:
                self.skips[target] += k
            return
        for target in self.targets(mover, k):
            if rank == "7":
                self._penalty(target, 1, "7")  # R6.1
            elif rank == "8":
                self._penalty(target, 2, "8")  # R6.2
                self.skips[target] += 1
            else:
                self.skips[target] += 1  # R6.3

    def _penalty(self, seat: int, count: int, rank: str) -> None:
        """R6.5 effect draws; each lapses when no card can be drawn (R7.2)."""
        hand = self.hands[seat]
        for _ in range(count):
            card = self._take()
            if card is None:
                return
            hand.append(card)
            self.drawn[seat] += 1
            self._emit({"event": "penalty", "seat": seat, "card": card._text, "rank": rank})

    def _next_mover(self, mover: int) -> None:
        """Pass play on (R2.1), spending lost turns as they come up (R6.5)."""
        n = self.n
        seat = (mover + 1) % n
        skips = self.skips
        while skips[seat] > 0:
            skips[seat] -= 1
            self._emit({"event": "skip", "seat": seat})
            seat = (seat + 1) % n
        self.mover = seat
        self.move = Move(seat, self.hands[seat], self.pile[-1], self.move.suit, None, len(self.stock), len(self.pile))

    # -- R8 end of a round, R9 end of the game -----------------------------
    def hand_points(self, seat: int) -> int:
        """R1.3 penalty points of the cards in ``seat``'s hand."""
        table = self.rules.points
        return sum(table[c.rank] for c in self.hands[seat])

    def _end_round(self, winner: int | None) -> RoundResult:
        rules = self.rules
        self.in_round = False
        self.last_winner = winner
        points = [self.hand_points(s) for s in range(self.n)]  # R8.2
        scores = [self.scores[s] + points[s] for s in range(self.n)]
        if winner is not None and rules.jack_finish:
            group = self.final_group(self.move.put)
            jacks = sum(1 for c in group if c.rank == "j")
            scores[winner] -= rules.jack_finish * jacks
        burned = [s for s in range(self.n) if rules.burn is not None and scores[s] == rules.burn]
        for s in burned:
            scores[s] = 0  # R8.3
        self.scores = scores
        result = RoundResult(self.round, winner, tuple(points), tuple(scores), tuple(burned))
        self.round_results.append(result)
        self._emit(
            {
                "event": "round",
                "round": self.round,
                "winner": winner,
                "points": points,
                "scores": list(scores),
                "burned": burned,
            }
        )
        if any(s > rules.limit for s in scores) or self.round >= rules.max_rounds:  # R2.3, R2.4
            self.over = True
        return result

    def losers(self) -> tuple[int, ...]:
        """R9.1 seats over the limit (with teams: both partners of such a seat)."""
        over = {s for s in range(self.n) if self.scores[s] > self.rules.limit}
        if self.rules.teams:
            half = self.n // 2
            over |= {(s + half) % self.n for s in over}
        return tuple(sorted(over))

    def end(self, retired: set[int] | frozenset[int] = frozenset()) -> GameResult:
        """Close the game (R9.1) and write the ``end`` record. Retired seats place last."""
        if not self.over:
            raise RuntimeError("the game is not over")
        places = place_seats(self.scores, retired, self.rules.teams)
        self.result = GameResult(tuple(self.scores), self.losers(), places, self.round)
        self._emit(
            {
                "event": "end",
                "scores": list(self.scores),
                "losers": list(self.result.losers),
                "places": list(places),
                "rounds": self.round,
            }
        )
        return self.result

    # -- views --------------------------------------------------------------
    def all_cards(self) -> list[Card]:
        """Every card in hands, stock and pile: 36 of them, always."""
        out = [c for h in self.hands for c in h]
        out += self.stock
        out += self.pile
        return out


__all__ = ["Game", "GameResult", "RoundResult", "TABLE_OUTPUT_BYTES", "TABLE_SAY_BYTES", "derive_seed"]
__all__ += ["place_seats", "record_bytes", "SUITS"]
