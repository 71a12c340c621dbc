"""The server's builds: a bot program's ``build`` runs once per uploaded version, in the build
workers' queue (:func:`run_queue`), and every other reader takes its output from the cache.

A build worker claims the next build (:func:`arena.server.store.builds.claim`: authors take turns,
one build worker each at most), runs it in the build sandbox
(:func:`arena.sandbox.programs.build.run_build`, its own PID namespace and tmpfs), keeps its
output in the contest's ``builds/`` folder (:class:`~arena.sandbox.programs.buildcache.BuildCache`:
content-addressed, written atomically) and records the sha256 of the entry, or the failure's one
line, in the database; then lets go of the author's builds no version needs
(:func:`arena.server.store.builds.evict`). The check, the ladder, the tables and the final never build: they take a
version's built files with :func:`playable`, which reads the entry back as untrusted input, checked
against the digest the database recorded; an entry missing or damaged is queued to be built again
(:func:`arena.server.store.builds.rebuild`) and the version waits (:class:`NotReady`), never trusted.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace

from ...errors import BotLoadError
from ...trust.botsource import BotSource
from ..store import builds
from ..store import database as store
from .uploads import stored_bot


class NotReady(Exception):
    """A version's build is not done: queued, being built, or being built again."""


def playable(db: sqlite3.Connection, submission: int, bot: str, source: bytes) -> BotSource:
    """The stored bot of ``submission`` as it plays: with its built files from the cache (a failed
    build: its line as the bot's problem), or as stored when it needs no build.

    :raises NotReady: its build is not done, or its cached output was missing or damaged (queued
        again). :raises BotLoadError: the stored bytes are no bot (:func:`.uploads.stored_bot`)."""
    src = stored_bot(bot, source)
    found = db.execute("SELECT build FROM submissions WHERE id = ?", (submission,)).fetchone()
    key = found[0] if found is not None else None
    if key == "":
        return src
    row = db.execute("SELECT state, digest, error FROM builds WHERE key = ?", (key,)).fetchone() if key else None
    if row is not None and row["state"] == "evicted":  # its output was let go: built again, as it is asked for
        builds.rebuild(db, str(key), None)
    if row is None or row["state"] not in ("built", "failed"):
        raise NotReady(f"{bot}: its build is not done")
    if row["state"] == "failed":
        return replace(src, problem=str(row["error"] or "the build failed"))
    from ...sandbox.programs.buildcache import BuildCache

    files = BuildCache(builds.cache_folder(db)).load(str(key), row["digest"])
    if files is None:
        builds.rebuild(db, str(key), row["digest"])
        raise NotReady(f"{bot}: its build's cached output is missing or damaged; it is built again")
    return replace(src, built=tuple(sorted(files.items())))


def run_queue(db: sqlite3.Connection, worker: int) -> bool:
    """Build the next queued build, if any (as ``worker``, a process id); whether there was one."""
    from ...sandbox.programs.build import run_build
    from ...sandbox.programs.buildcache import BuildCache, check_names
    from ...trust.botfolder import unbundle

    row = builds.claim(db, worker)
    if row is None:
        return False
    key = str(row["key"])
    sub = store.submission(db, int(row["submission"]))
    source = store.source_bytes(sub["source"]) if sub is not None else b""
    found = builds.needs(source)
    if sub is None or found is None or found[0] != key:  # an edited database: nothing to build from
        builds.finish(db, key, None, "the build failed: its upload is not the bot program it was")
        return True
    where = f"{sub['bot']}/"
    try:
        _, files = unbundle(source.decode("utf-8", "replace"), where)
        built = run_build(found[1], dict(files), where)
        check_names(built, where)
    except BotLoadError as exc:
        builds.finish(db, key, None, exc.message)
        return True
    cache = BuildCache(builds.cache_folder(db))
    try:
        digest = cache.save(key, built)
    except OSError as exc:  # the server's disk, not the author's build: said so, and tried again on a new upload
        builds.finish(db, key, None, f"the build's output could not be kept ({exc.strerror or exc}); upload it again")
        return True
    builds.finish(db, key, digest, None)
    for let_go, entry in builds.evict(db, int(row["author"])):  # the author's builds no version needs
        cache.forget(let_go, entry)
    return True
