"""Yard Bridge Arena: referee, sandbox and tournaments for yard bridge bots.

Bots need only ``from arena import Card, IllegalMove``.
"""

from .cards import DECK, RANKS, SUITS, Card, cards
from .engine import Game, GameResult, RoundResult
from .errors import BotLoadError, IllegalMove
from .rules import CONTEST, Rules

__version__ = "0.1.0"
__all__ = [
    "Card",
    "cards",
    "DECK",
    "RANKS",
    "SUITS",
    "IllegalMove",
    "BotLoadError",
    "Rules",
    "CONTEST",
    "Game",
    "GameResult",
    "RoundResult",
    "__version__",
]
