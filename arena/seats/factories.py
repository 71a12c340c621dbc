"""Turning bot specs into players for the referee: trusted in-process or sandboxed.

Registered reference bots may run in-process (``trusted=True``); every bot
given by file path runs in the sandbox. Both give a factory
``factory(bot_key, seat)``: a :class:`~arena.game.referee.Player` (in-process) or a
:class:`~arena.game.referee.RemoteSeat` (sandboxed) for one game, its bot seeded from the
game's bot key (:mod:`arena.game.seeds`; never the deal's seed) and the seat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: ``factory(bot_key, seat)``: the occupant of ``seat`` for one game.
from ..trust.botsource import BotSource
from .loader import load_trusted

Factory = Callable[[Any, int], Any]


def make_factory(src: BotSource, *, trusted: bool = False, limits: Any = None) -> Factory:
    """A player factory for ``src``: in-process when ``trusted``, else sandboxed."""
    if trusted and src.runtime == "python":  # a program is never trusted: it always runs sandboxed
        return load_trusted(src)
    from ..sandbox.programs.runtimes import program_factory
    from ..sandbox.python.factory import SandboxFactory

    if src.runtime != "python":
        return program_factory(src, limits)
    return SandboxFactory(src, limits)
