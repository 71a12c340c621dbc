"""Cards of the 36-card deck (R1).

A :class:`Card` is a small immutable value that round-trips through its text
form (R1.2)::

    >>> Card.parse("10H")
    Card('10h')
    >>> str(Card("jd")), Card("jd").points
    ('jd', 20)

There are exactly 36 cards; ``Card(text)`` always returns the same interned
object for the same card, so cards compare and hash cheaply.
"""

from __future__ import annotations

from typing import Any

from ..errors import IllegalMove

SUITS: tuple[str, ...] = ("s", "c", "h", "d")
RANKS: tuple[str, ...] = ("6", "7", "8", "9", "10", "j", "q", "k", "a")

#: Contest point table (R1.3); a variant may use another (``Rules.points``).
DEFAULT_POINTS: dict[str, int] = {
    "6": 0,
    "7": 0,
    "8": 0,
    "9": 0,
    "10": 10,
    "j": 20,
    "q": 10,
    "k": 10,
    "a": 15,
}

SUIT_SYMBOLS: dict[str, str] = {"s": "\u2660", "c": "\u2663", "h": "\u2665", "d": "\u2666"}
SUIT_NAMES: dict[str, str] = {"s": "spades", "c": "clubs", "h": "hearts", "d": "diamonds"}


class Card:
    """One card: ``rank`` ("6".."10", "j", "q", "k", "a"), ``suit`` ("s", "c", "h", "d").

    ``points`` is the contest penalty value (R1.3). Immutable and interned:
    ``Card("7h") is Card.parse("7H")``.
    """

    __slots__ = ("rank", "suit", "points", "index", "_text")
    _by_text: dict[str, Card] = {}

    rank: str
    suit: str
    points: int
    index: int
    _text: str

    def __new__(cls, text: str | Card) -> Card:
        if isinstance(text, Card):
            return text
        try:
            return cls._by_text[text]
        except (KeyError, TypeError):
            pass
        if not isinstance(text, str):
            raise ValueError(f"R1.2: a card is written as text like '10h', not {type(text).__name__}")
        card = cls._by_text.get(text.strip().lower())
        if card is None:
            raise ValueError(f"R1.2: {text!r} is not a card (rank 6-10/j/q/k/a then suit s/c/h/d, e.g. '10h')")
        return card

    @classmethod
    def _make(cls, rank: str, suit: str, index: int) -> Card:
        card = object.__new__(cls)
        object.__setattr__(card, "rank", rank)
        object.__setattr__(card, "suit", suit)
        object.__setattr__(card, "points", DEFAULT_POINTS[rank])
        object.__setattr__(card, "index", index)
        object.__setattr__(card, "_text", rank + suit)
        return card

    @classmethod
    def parse(cls, text: str | Card) -> Card:
        """Parse ``"10h"``, ``"JS"``, ... (case-insensitive, R1.2).

        :raises ValueError: the text is not a card.
        """
        return cls(text)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Card is immutable")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card('{self._text}')"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Card, (self._text,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Card:
        return self

    # Cards are interned, so equality is identity. Written out because ``__lt__`` below
    # is Python code: then every comparison of cards goes through Python, and without
    # these ``==`` (so ``in`` and ``remove`` on a hand, once per card passed) would call
    # object's ``__eq__`` both ways round before falling back to identity, 2.5x as slow.
    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return self.index

    def __lt__(self, other: Card) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index < other.index

    @property
    def symbol(self) -> str:
        """The card with a suit symbol, for people: ``10♥``."""
        return (
            self.rank.upper() + SUIT_SYMBOLS[self.suit] if self.rank in "jqka" else self.rank + SUIT_SYMBOLS[self.suit]
        )


def _build() -> tuple[Card, ...]:
    cards = []
    for r_i, rank in enumerate(RANKS):
        for s_i, suit in enumerate(SUITS):
            card = Card._make(rank, suit, r_i * 4 + s_i)
            Card._by_text[rank + suit] = card
            cards.append(card)
    return tuple(cards)


#: The 36 cards in a fixed order (rank-major); shuffles start from this order.
DECK: tuple[Card, ...] = _build()


def cards(text: str) -> list[Card]:
    """Parse a space- or comma-separated list of cards: ``cards("6h 7h jd")``."""
    return [Card(t) for t in text.replace(",", " ").split()]


def to_card(card: Any) -> Card:
    """A ``Card`` from a card or its text; :class:`IllegalMove` (R1.2) otherwise."""
    if type(card) is Card:
        return card
    if isinstance(card, str):
        text = str.__str__(card) if type(card) is not str else card
        try:
            return Card(text)
        except ValueError as exc:
            raise IllegalMove("R1.2", str(exc).removeprefix("R1.2: ")) from None
    raise IllegalMove("R1.2", f"a card is a Card or its text like '10h', not {type(card).__name__}")


def to_suit(suit: Any) -> str | None:
    """A suit letter from ``suit`` ("s", "H", ...); None stays None."""
    if suit is None:
        return None
    if isinstance(suit, str):
        text = (str.__str__(suit) if type(suit) is not str else suit).strip().lower()
        if text in SUITS:
            return text
    raise IllegalMove("R6.4", f"a jack orders one of s, c, h, d, not {suit!r:.20}")
