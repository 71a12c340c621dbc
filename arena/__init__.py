"""Yard Bridge Arena: referee, sandbox and tournaments for yard bridge bots.

Bots need only ``from arena import Card, IllegalMove``. The Python API (docs/python-api.md):
``arena.play``, ``arena.position``, ``arena.ask`` and their types, imported on first use
(PEP 562), so that a bot's ``import arena`` stays light.
"""

from typing import TYPE_CHECKING, Any

from .errors import BotLoadError, IllegalMove
from .game.cards import DECK, RANKS, SUITS, Card, cards
from .game.engine import Game, GameResult, RoundResult
from .game.rules import CONTEST, Rules

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
    "play",
    "position",
    "ask",
    "Position",
    "Answer",
    "MatchResult",
    "StandingsRow",
]

#: The Python API's names, and the module each lives in.
_API = {
    "play": "api",
    "position": "api",
    "ask": "api",
    "Position": "api",
    "Answer": "api",
    "MatchResult": "playing.match",
    "StandingsRow": "playing.match",
}

if TYPE_CHECKING:
    from .api import Answer, Position, ask, play, position
    from .playing.match import MatchResult, StandingsRow


def __getattr__(name: str) -> Any:
    if name in _API:
        import importlib

        return getattr(importlib.import_module(f".{_API[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
