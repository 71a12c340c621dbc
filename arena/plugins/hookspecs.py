"""Every hook a plugin of the arena may implement (pluggy, project name ``arena``).

Third parties plug in by entry point alone: group ``arena.bots`` (or
``arena.plugins``) naming a module that implements some of these hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("arena")
hookimpl = pluggy.HookimplMarker("arena")


@hookspec
def arena_bots() -> list[tuple[str, str]]:
    """Bots this plugin provides, as ``(name, path to the bot file)`` pairs.

    The first plugin to name a bot wins; names are what ``arena play NAME`` takes.
    """


@hookspec
def arena_rule_variants() -> dict[str, dict[str, Any]]:
    """Rule variants this plugin provides: variant name -> settings of
    :class:`arena.game.rules.Rules` that differ from the contest defaults."""


@hookspec
def arena_reporters() -> dict[str, Callable[[dict[str, Any]], str]]:
    """Result reporters: format name -> function turning a results document
    (the ``--json`` output) into text. ``arena play --format NAME`` uses them."""
