"""What the mover may do within one move (R4, R5, R7.2): the public rules code.

A :class:`Move` holds only what the mover can see (R10): their hand, the top
and the suit to follow, the cards put so far in this move and whether cards
can still be drawn. The referee's engine uses it, and so does a sandboxed
bot's worker to check puts locally before the referee re-checks them.
"""

from __future__ import annotations

from ..errors import IllegalMove
from .cards import SUITS, Card


class Move:
    """The move in progress, seen by its mover.

    ``put`` lists the cards put in this move, the opening card included on a
    round's first move (R3.3). ``stock`` and ``pile_size`` count the stock
    and the physical pile so that R7.2 (can a card be drawn at all?) is known.
    """

    __slots__ = ("seat", "hand", "top", "suit", "put", "drew", "stock", "pile_size", "finished", "first")

    def __init__(
        self,
        seat: int,
        hand: list[Card],
        top: Card,
        suit: str,
        put: list[Card] | None = None,
        stock: int = 0,
        pile_size: int = 1,
        first: bool = False,
    ) -> None:
        self.seat = seat
        self.hand = hand
        self.top = top
        self.suit = suit
        self.put: list[Card] = put if put is not None else []
        self.drew = False
        self.stock = stock
        self.pile_size = pile_size
        self.finished = False
        self.first = first

    # -- facts -------------------------------------------------------------
    def matches(self, card: Card) -> bool:
        """R4.1: a jack, the suit to follow, or the top's rank."""
        return card.rank == "j" or card.suit == self.suit or card.rank == self.top.rank

    def drawable(self) -> bool:
        """R7.1/R7.2: a card can be drawn (from the stock, or after a reshuffle)."""
        return self.stock > 0 or self.pile_size > 1

    def needs_cover(self) -> bool:
        """R5.1: the top is a six this player put in this move."""
        return bool(self.put) and self.put[-1].rank == "6"

    def has_cover(self) -> bool:
        """R5.2/R5.3: a card in hand covers the six on top."""
        suit, rank = self.suit, self.top.rank
        for c in self.hand:  # a plain loop: cheaper than any() over a generator
            if c.rank == "j" or c.suit == suit or c.rank == rank:
                return True
        return False

    def allowed(self, card: Card) -> bool:
        """Whether ``card`` (held) may be put now; no reason given (the fast path)."""
        if self.finished:
            return False
        put = self.put
        if not put or put[-1].rank == "6":
            return card.rank == "j" or card.suit == self.suit or card.rank == self.top.rank
        return card.rank == put[-1].rank

    def puttable(self) -> list[Card]:
        """The held cards that may be put now, in hand order."""
        # Bots call this several times a move. Plain loops, because on
        # Python 3.11 a list comprehension over these locals costs a closure
        # and a call (about a third more for a hand of five).
        out: list[Card] = []
        if self.finished:
            return out
        put = self.put
        if not put or put[-1].rank == "6":
            suit, rank = self.suit, self.top.rank
            for c in self.hand:
                if c.rank == "j" or c.suit == suit or c.rank == rank:
                    out.append(c)
        else:
            rank = put[-1].rank
            for c in self.hand:
                if c.rank == rank:
                    out.append(c)
        return out

    # -- checked path ------------------------------------------------------
    def check_put(self, card: Card, suit: str | None = None) -> None:
        """Raise :class:`IllegalMove` unless ``card`` may be put now with ``suit`` ordered."""
        if self.finished:
            raise IllegalMove("R4.6", "the move is already finished")
        if card not in self.hand:
            raise IllegalMove("R10", f"{card} is not in your hand")
        if suit is not None and card.rank == "j" and suit not in SUITS:
            raise IllegalMove("R6.4", f"a jack orders one of s, c, h, d, not {suit!r}")
        if not self.put:
            # matches(card), inlined: this check runs on nearly every move.
            if not (card.rank == "j" or card.suit == self.suit or card.rank == self.top.rank):
                raise IllegalMove(
                    "R4.2",
                    f"the first card must match {self.top} (suit {self.suit}, rank {self.top.rank} or a jack); "
                    f"{card} does not",
                )
        elif self.needs_cover():
            if not self.matches(card):
                raise IllegalMove(
                    "R5.2", f"{card} does not cover the six {self.top} (suit {self.suit}, a six or a jack)"
                )
        elif card.rank != self.put[-1].rank:
            raise IllegalMove(
                "R4.3", f"after {self.put[-1]} only cards of rank {self.put[-1].rank} may follow, not {card}"
            )

    def draw_refusal(self) -> tuple[str, str] | None:
        """Why a draw is not allowed now, as (rule, reason); None when it is."""
        if self.finished:
            return ("R4.6", "the move is already finished")
        if self.put and self.put[-1].rank == "6":
            if self.has_cover():
                return ("R5.3", f"you hold a card that covers {self.top}: put it instead of drawing")
        elif self.put:
            return ("R4.4", "no draw after a card was put in this move")
        elif self.drew:
            return ("R4.4", "at most one draw per move")
        if not (self.stock > 0 or self.pile_size > 1):
            return ("R7.2", "no card can be drawn: stock and pile are empty")
        return None

    def finish_refusal(self) -> tuple[str, str] | None:
        """Why the move may not end now, as (rule, reason); None when it may."""
        if self.finished:
            return ("R4.6", "the move is already finished")
        drawable = self.stock > 0 or self.pile_size > 1
        if self.put:
            if self.put[-1].rank == "6" and (drawable or self.has_cover()):
                return ("R5.1", f"the six {self.top} you put must be covered first")
            return None
        if not self.drew and drawable:
            return ("R4.5", "put a card or draw one before finishing")
        return None

    def check_draw(self) -> None:
        """Raise :class:`IllegalMove` unless a draw is allowed now."""
        if not self.can_draw():
            raise IllegalMove(*self.draw_refusal())  # type: ignore[misc]

    def check_finish(self) -> None:
        """Raise :class:`IllegalMove` unless the move may end now."""
        if not self.can_finish():
            raise IllegalMove(*self.finish_refusal())  # type: ignore[misc]

    # The two answers bots ask for most, computed directly; they agree with
    # draw_refusal() / finish_refusal() above (tests/game/test_rules.py checks it).
    def can_draw(self) -> bool:
        """Whether a draw is allowed now (R4.4, R5.3, R7.2)."""
        if self.finished:
            return False
        put = self.put
        if put:
            if put[-1].rank != "6" or self.has_cover():
                return False
        elif self.drew:
            return False
        return self.stock > 0 or self.pile_size > 1

    def can_finish(self) -> bool:
        """Whether the move may end now (R4.5, R5.1, R5.4)."""
        if self.finished:
            return False
        put = self.put
        if put:
            if put[-1].rank == "6":
                return not (self.stock > 0 or self.pile_size > 1 or self.has_cover())
            return True
        return self.drew or not (self.stock > 0 or self.pile_size > 1)
