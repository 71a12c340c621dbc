"""The plugin manager: hook specs, entry points, built-ins (pluggy)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pluggy

from ..game.rules import Rules
from . import hookspecs


@functools.lru_cache(maxsize=1)
def get_plugin_manager() -> pluggy.PluginManager:
    """Build the one plugin manager: specs, entry points, built-ins, check."""
    from . import builtin, reference_bots

    pm = pluggy.PluginManager("arena")
    pm.add_hookspecs(hookspecs)
    pm.load_setuptools_entrypoints("arena.bots")
    pm.load_setuptools_entrypoints("arena.plugins")
    for module in (reference_bots, builtin):
        if not pm.is_registered(module):
            pm.register(module)
    pm.check_pending()
    return pm


def variants() -> dict[str, Rules]:
    """Every rule variant by name (``contest`` is the default)."""
    found: dict[str, Rules] = {}
    for batch in reversed(get_plugin_manager().hook.arena_rule_variants()):
        for name, settings in batch.items():
            found[name] = Rules(name=name, **settings)
    return found


def reporters() -> dict[str, Callable[[dict[str, Any]], str]]:
    """Every result reporter by format name."""
    found: dict[str, Callable[[dict[str, Any]], str]] = {}
    for batch in reversed(get_plugin_manager().hook.arena_reporters()):
        found.update(batch)
    return found
