"""From a bot to its seat factory: the one dispatcher (trusted in-process, a sandboxed Python
worker, or a program).

Registered reference bots may run in-process (``trusted=True``); every bot
given by file path runs in the sandbox, and a program (a ``.js`` file, a folder with a
``bot.toml``) always does. Each gives a :class:`~arena.seats.contract.SeatFactory`
``factory(bot_key, seat)``: a :class:`~arena.game.referee.Player` (in-process) or a
:class:`~arena.game.referee.RemoteSeat` (sandboxed) for one game, its bot seeded from the
game's bot key (:mod:`arena.game.seeds`; never the deal's seed) and the seat.
"""

from __future__ import annotations

from typing import Any

from ..trust.botsource import BotSource
from .contract import SeatFactory
from .loader import load_trusted


def make_factory(src: BotSource, *, trusted: bool = False, limits: Any = None) -> SeatFactory:
    """The seat factory for ``src``: in-process when ``trusted`` (a Python bot only), else
    sandboxed: a Python worker for a bot file, a program's runtime for a program.

    :raises BotLoadError: the source fails the static checks, or cannot be loaded or started.
    """
    if trusted and src.runtime == "python":  # a program is never trusted: it always runs sandboxed
        return load_trusted(src)
    if src.runtime != "python":
        from ..sandbox.programs.runtimes import program_factory

        return program_factory(src, limits)
    from ..sandbox.python.factory import SandboxFactory

    return SandboxFactory(src, limits)


def sandboxed_factory(src: BotSource, limits: Any = None) -> SeatFactory:
    """:func:`make_factory` for untrusted source (``arena.sandbox.sandboxed_factory``): a Python
    worker for a bot file, a :class:`~arena.sandbox.programs.seat.ProgramFactory` for a program."""
    return make_factory(src, trusted=False, limits=limits)
