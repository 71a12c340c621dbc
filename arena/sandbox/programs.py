"""Which runtime runs a bot program, and its factory (:func:`program_factory`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import BotLoadError
from .limits import Limits

if TYPE_CHECKING:
    from ..loader import BotSource
    from .progseat import ProgramFactory

#: Runtimes by :attr:`~arena.loader.BotSource.runtime`.
RUNTIMES = ("node",)


def program_factory(src: BotSource, limits: Limits | None = None) -> ProgramFactory:
    """A seat factory for a bot program. :raises BotLoadError: it cannot be staged or started."""
    from ..loader import source_bytes
    from .program import node_runtime
    from .progseat import ProgramFactory

    limits = limits or Limits()
    if src.problem:
        raise BotLoadError(src.problem, path=src.label)
    if src.runtime == "node":
        return ProgramFactory(src, node_runtime(limits, "bot.js"), {"bot.js": source_bytes(src.source)}, limits)
    raise BotLoadError(f"no runtime {src.runtime!r} (known: {', '.join(RUNTIMES)})", path=src.label)
