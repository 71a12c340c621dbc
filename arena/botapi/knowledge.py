"""What one seat knows of the hidden cards, and deals consistent with it (the forward model's sampler).

:class:`Facts` reads a ``turn`` through the public API only (its hand, the pile, the
counts, the public history of the round) and keeps, for every card another seat
holds and for the stock, the set of cards it may be. :func:`assign` deals the hidden
cards into those sets at random. docs/bot-api.md, "Searching ahead".
"""

from __future__ import annotations

import random
from typing import Any

from ..game.cards import DECK, Card, to_card

__all__ = ["ALL", "Facts", "assign"]

ALL = (1 << 36) - 1
_BIT = {c: 1 << c.index for c in DECK}


def _mask(cards: Any) -> int:
    m = 0
    for c in cards:
        m |= _BIT[c]
    return m


def _cover_mask(top: Card, suit: str) -> int:
    """The cards that match ``top`` with ``suit`` to follow (R4.1): what covers a six."""
    return _mask(c for c in DECK if c.rank == "j" or c.suit == suit or c.rank == top.rank)


class Facts:
    """What one seat knows of the round in progress, parsed once from its ``turn``.

    Each card another seat holds is a *slot* with the set of cards it may be (a bit
    mask): any card when dealt or drawn from the first stock, the reshuffled cards
    when drawn after a reshuffle; narrowed by the facts the history tells (no card on
    the pile at a reshuffle was held; no cover was held at a six-cover draw). ``soft``
    narrows further by what is likely but not certain: a seat that drew instead of
    putting (R4.4) held nothing that matched.
    """

    __slots__ = (
        "n",
        "seat",
        "rules",
        "names",
        "hand",
        "pile",
        "round_pile",
        "put",
        "drew",
        "first",
        "top",
        "suit",
        "scores",
        "skips",
        "drawn",
        "round",
        "moves",
        "last_winner",
        "slots",
        "stock",
        "stock_mask",
        "pool",
    )

    def __init__(self, turn: Any) -> None:
        players = tuple(turn.players)
        self.n = n = len(players)
        self.seat = me = int(turn.seat)
        self.rules = turn.rules
        self.names = tuple(str(p.name) for p in players)
        self.hand = [to_card(c) for c in turn.hand]
        self.round_pile = [to_card(c) for c in turn.pile]
        self.put = [to_card(c) for c in turn.put_this_move]
        self.first = bool(turn.first)
        self.top = to_card(turn.top)
        self.suit = str(turn.suit)
        self.scores = [int(p.score) for p in players]
        self.skips = [int(p.skips) for p in players]
        self.stock = int(turn.stock)
        history = turn.history
        start = len(history) - 1
        while start >= 0 and history[start]["event"] != "deal":
            start -= 1
        self.last_winner = None
        for e in reversed(history[: max(start, 0)]):
            if e["event"] == "round":
                self.last_winner = e["winner"]
                break
        deal: Any = history[start] if start >= 0 else {"round": 1, "hands": [len(self.hand)] * n}
        self.round = int(deal["round"])
        slots: list[list[list[int]]] = [[[ALL, ALL] for _ in range(int(k))] for k in deal["hands"]]
        slots[me] = []
        pile: list[Card] = []
        drawn = [0] * n
        stock_mask = ALL
        moves = 0
        put: list[Card] = []
        drew = False
        top, suit = self.top, self.suit
        for e in history[start + 1 :]:
            kind = e["event"]
            seat = e.get("seat")
            if kind == "put":
                card = Card(e["card"])
                pile.append(card)
                put.append(card)
                top, suit = card, e.get("suit") or card.suit
                if not e.get("opening") and seat != me:
                    _take_slot(slots[seat], _BIT[card])
            elif kind == "draw" or kind == "penalty":
                if kind == "draw" and seat != me:
                    if put and put[-1].rank == "6":  # R5.3: no cover was held
                        _narrow(slots[seat], _cover_mask(top, suit), hard=True)
                    elif not put:  # R4.4: drew instead of putting (likely: nothing matched)
                        _narrow(slots[seat], _cover_mask(top, suit), hard=False)
                if kind == "draw" and seat == me and not put:
                    drew = True
                drawn[seat] += 1
                if seat != me:
                    slots[seat].append([stock_mask, stock_mask])
            elif kind == "finish":
                if seat != me and put and put[-1].rank == "6":  # R5.4: an uncovered six
                    _narrow(slots[seat], _cover_mask(top, suit), hard=True)
                moves += 1
                put, drew = [], False
            elif kind == "reshuffle":
                stock_mask = _mask(pile[:-1])
                for seat_slots in slots:
                    _narrow(seat_slots, stock_mask, hard=True)
                pile = pile[-1:]
        self.pile = pile if pile else [self.top]
        self.drawn = drawn
        self.moves = moves
        self.drew = drew
        self.pool = ALL & ~_mask(self.hand) & ~_mask(self.pile)
        hidden = self.pool.bit_count()
        for s in range(n):  # a count the history did not explain: that seat's slots know nothing
            if s != me and len(slots[s]) != players[s].cards:
                slots[s] = [[ALL, ALL] for _ in range(int(players[s].cards))]
        self.slots = slots
        self.stock_mask = stock_mask
        if sum(map(len, slots)) + self.stock != hidden:
            raise ValueError("the turn's counts disagree with its history")


def _take_slot(slots: list[list[int]], bit: int) -> None:
    """A put card left one of the seat's slots: the narrowest that allows it (the others
    stay as loose as the truth allows, whichever slot it was)."""
    best = -1
    for i, (hard, _soft) in enumerate(slots):
        if hard & bit and (best < 0 or hard.bit_count() < slots[best][0].bit_count()):
            best = i
    if best < 0:
        best = max(range(len(slots)), key=lambda i: slots[i][0].bit_count(), default=-1)
    if best >= 0:
        del slots[best]


def _narrow(slots: list[list[int]], mask: int, hard: bool) -> None:
    keep = ~mask
    for slot in slots:
        slot[1] &= keep
        if hard:
            slot[0] &= keep


def assign(masks: list[int], pool: int, rng: random.Random) -> list[Card] | None:
    """A card for each slot, each within its mask, no card twice: at random, the narrowest
    slots first, completed by augmenting paths when the greedy pass gets stuck. None when
    no assignment exists."""
    cards = [c for c in DECK if pool >> c.index & 1]
    order = sorted(range(len(masks)), key=lambda i: ((masks[i] & pool).bit_count(), rng.random()))
    out: list[Card | None] = [None] * len(masks)
    free = pool
    stuck = []
    for i in order:
        options = [c for c in cards if (masks[i] & free) >> c.index & 1]
        if options:
            card = options[rng.randrange(len(options))]
            out[i] = card
            free &= ~_BIT[card]
        else:
            stuck.append(i)
    if stuck:
        holder: dict[Card, int] = {c: i for i, c in enumerate(out) if c is not None}
        for i in stuck:
            if not _augment(i, masks, cards, holder, out, set()):
                return None
    return out  # type: ignore[return-value]


def _augment(
    i: int, masks: list[int], cards: list[Card], holder: dict[Card, int], out: list[Card | None], seen: set[Card]
) -> bool:
    for c in cards:
        if masks[i] >> c.index & 1 and c not in seen:
            seen.add(c)
            j = holder.get(c)
            if j is None or _augment(j, masks, cards, holder, out, seen):
                holder[c] = i
                out[i] = c
                return True
    return False
