"""The reference bots shipped in ``bots/`` (installed as ``arena.bots``)."""

from __future__ import annotations

from importlib import resources

from .hookspecs import hookimpl


@hookimpl
def arena_bots() -> list[tuple[str, str]]:
    folder = resources.files("arena.bots")
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".py") and not entry.name.startswith("_"):
            found.append((entry.name[:-3], str(entry)))
    return found
