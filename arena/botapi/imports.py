"""What a bot's code may import, the same in every runtime (docs/bot-api.md).

The referee seeds each bot's ``random``; it is the bot's own
``random.Random`` instance behind a module-shaped stand-in, never the shared
module, so a bot can neither predict nor reseed anybody else's shuffles.
"""

from __future__ import annotations

import bisect
import collections
import functools
import heapq
import itertools
import math
import random as _random
import statistics
import types
from typing import Any


def public_copy(module: types.ModuleType) -> types.ModuleType:
    """A stand-in holding only ``module``'s public names that are not modules
    (so ``from statistics import sys`` finds nothing)."""
    copy = types.ModuleType(module.__name__, module.__doc__)
    for name, value in vars(module).items():
        if not name.startswith("_") and not isinstance(value, types.ModuleType):
            setattr(copy, name, value)
    return copy


#: Modules a bot may import besides ``random`` and ``arena``.
PLAIN_MODULES: dict[str, types.ModuleType] = {
    m.__name__: public_copy(m) for m in (math, itertools, collections, heapq, bisect, statistics)
}

#: Every top-level name a bot may import.
ALLOWED_IMPORTS: tuple[str, ...] = (
    "random",
    "math",
    "itertools",
    "collections",
    "functools",
    "heapq",
    "bisect",
    "statistics",
    "arena",
)

_RANDOM_NAMES = (
    "random",
    "uniform",
    "triangular",
    "randint",
    "randrange",
    "choice",
    "choices",
    "shuffle",
    "sample",
    "gauss",
    "normalvariate",
    "lognormvariate",
    "expovariate",
    "vonmisesvariate",
    "gammavariate",
    "betavariate",
    "paretovariate",
    "weibullvariate",
    "getrandbits",
    "seed",
    "randbytes",
)


class BotRandom(_random.Random):
    """The bot's ``random``: its own ``random.Random`` seeded by the referee,
    shaped like the module (``random.choice(...)``, ``random.Random``)."""

    Random = _random.Random


def make_random_module(seed: int) -> BotRandom:
    """A ``random`` stand-in bound to one ``random.Random(seed)`` of the bot's own."""
    return BotRandom(seed)


def make_functools_module() -> types.ModuleType:
    """``functools`` without its attribute tools (no ``partial`` over getattr, no wraps)."""
    module = types.ModuleType("functools")
    for name in ("reduce", "lru_cache", "cache", "cmp_to_key", "total_ordering"):
        setattr(module, name, getattr(functools, name))
    return module


def make_arena_module() -> types.ModuleType:
    """The harness's public names a bot may import: ``Card``, ``IllegalMove``, the forward model."""
    from ..errors import IllegalMove
    from ..game.cards import RANKS, SUITS, Card
    from .forward import sample_world, sampler

    module = types.ModuleType("arena")
    module.Card = Card  # type: ignore[attr-defined]
    module.IllegalMove = IllegalMove  # type: ignore[attr-defined]
    module.SUITS = SUITS  # type: ignore[attr-defined]
    module.RANKS = RANKS  # type: ignore[attr-defined]
    module.sample_world = sample_world  # type: ignore[attr-defined]
    module.sampler = sampler  # type: ignore[attr-defined]
    return module


_SHARED: dict[str, types.ModuleType] = {}


def make_importer(seed: int) -> Any:
    """An ``__import__`` that serves only :data:`ALLOWED_IMPORTS`, with the
    bot's own seeded ``random``; the other stand-ins are made once."""
    if not _SHARED:
        _SHARED.update(PLAIN_MODULES)
        _SHARED["functools"] = make_functools_module()
        _SHARED["arena"] = make_arena_module()
    modules: dict[str, Any] = dict(_SHARED)
    modules["random"] = make_random_module(seed)

    def bot_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level != 0 or name not in modules:
            raise ImportError(f"bots may import only {', '.join(ALLOWED_IMPORTS)}; not {name!r}")
        module = modules[name]
        for attr in fromlist or ():
            if not isinstance(attr, str) or attr.startswith("_") or not hasattr(module, attr):
                raise ImportError(f"cannot import {attr!r} from {name!r}")
        return module

    return bot_import
