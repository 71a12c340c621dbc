"""A tournament's builds: each bot program with a ``build`` (its bot.toml) built once per run.

The parent builds before any game (:func:`prebuild`) and hands the built files to every worker
with the bot's source (:attr:`~arena.trust.botsource.BotSource.built`: a local worker process, a
Ray task, a stream, a factory made again after its eviction), so no worker builds; a bot whose
build fails is entered with the build's one line as its problem (the preflight warns of it, and it
is recorded as crashed in each of its games, as before). ``--build-cache DIR`` keeps the builds
between runs, content-addressed and read back checked (:class:`~arena.sandbox.programs.buildcache.BuildCache`;
a contest's ``builds/`` folder is one: the final takes its entrants' builds from it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import BotLoadError
from ..trust.botfolder import MANIFEST, parse_manifest
from ..trust.botsource import BotSource

if TYPE_CHECKING:
    from ..sandbox.programs.buildcache import BuildCache
    from .plan.plan import Plan


def with_build(src: BotSource, cache: BuildCache | None = None) -> BotSource:
    """``src`` with its built files (or, its build failed, with the build's one line as its
    problem); unchanged when it has no build, was built already, or cannot be read (its factory
    says why)."""
    if src.runtime != "program" or src.problem or src.built is not None:
        return src
    files = dict(src.files)
    try:
        command = parse_manifest(files[MANIFEST], src.label).get("build")
    except (BotLoadError, KeyError):
        return src
    if command is None:
        return src
    from ..sandbox.programs.buildcache import built_files

    try:
        built = built_files(command, files, src.label, cache=cache)
    except BotLoadError as exc:
        return replace(src, problem=exc.message)
    return replace(src, built=tuple(sorted(built.items())))


def prebuild(p: Plan, cache_folder: str | None = None) -> Plan:
    """``p`` with every entrant's build done (:func:`with_build`), each distinct build once, from
    and into the cache folder ``cache_folder`` when given."""
    cache = None
    if cache_folder is not None and any(e.src.runtime == "program" for e in p.entrants):
        from ..sandbox.programs.buildcache import BuildCache

        cache = BuildCache(cache_folder)
    return replace(p, entrants=tuple(replace(e, src=with_build(e.src, cache)) for e in p.entrants))
