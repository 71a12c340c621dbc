"""Yard Bridge Arena: referee, sandbox and tournaments for yard bridge bots.

Bots need only ``from arena import Card, IllegalMove``.
"""

# First: pick compiled or pure-Python referee modules (see arena/native.py).
from .native import select as _select_build

COMPILED: bool = _select_build()   #: whether the optional mypyc build is in use

from .cards import DECK, RANKS, SUITS, Card, cards  # noqa: E402
from .engine import Game, GameResult, RoundResult  # noqa: E402
from .errors import BotLoadError, IllegalMove  # noqa: E402
from .rules import CONTEST, Rules  # noqa: E402

__version__ = "0.1.0"
__all__ = ["Card", "cards", "DECK", "RANKS", "SUITS", "IllegalMove", "BotLoadError", "Rules", "CONTEST",
           "Game", "GameResult", "RoundResult", "__version__"]
