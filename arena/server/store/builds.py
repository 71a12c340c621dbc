"""The builds queue in the contest database: one row per build, by its key.

An upload whose bot program has a ``build`` (its bot.toml) names its build's key in
``submissions.build`` (:func:`arena.sandbox.programs.buildcache.build_key`: the sha256 of its
bundle, its build command and the :class:`~arena.sandbox.programs.build.BuildLimits`); '' when it
needs none; NULL until it is looked at (:func:`decide_missing`: an older database's uploads). A
build row is made with the upload, in its transaction, queued; the build workers claim them
(:func:`claim`), authors taking turns and no author holding more than one build worker at a time,
and record each outcome once (:func:`finish`): the sha256 of the cached output (``digest``) or the
failure's one line. Uploads of the same files and command share one build; a new upload of a
failed build queues it again (its outcome may have been the machine's: a time limit).

The check of an upload waits for its build (:data:`READY`) without holding back any other upload;
the ladder and the tables play a version only once its build is ``built`` (:func:`unready`).

The cache holds, of each author's builds, those an active version, a round's field or a waiting
check needs, and their :data:`KEEP_RECENT` latest; the others are *evicted* (:func:`evict`: their
output deleted), and built again if a version of theirs is asked for (:func:`wake`), so one author's
uploads cannot fill the contest's disk with builds.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ...trust.text import escape
from .basics import source_bytes, writing

#: Claims of one build whose worker died before the build is failed (a build that kills its worker).
MAX_ATTEMPTS = 3
#: An author's latest built builds kept in the cache besides those a version that plays or waits needs.
KEEP_RECENT = 4

#: An upload's build is done (or it needs none): its check may start. SQL on ``submissions s``.
READY = (
    "s.build IS NOT NULL AND (s.build = '' OR EXISTS (SELECT 1 FROM builds b WHERE b.key = s.build "
    "AND b.state IN ('built', 'failed')))"
)

#: The next build: of an author with no build running, authors taking turns (each author's k-th
#: queued build after every author's (k-1)-th), the oldest first within a turn.
FAIR_NEXT = (
    "SELECT * FROM builds b WHERE state = 'queued' AND NOT EXISTS (SELECT 1 FROM builds r "
    "WHERE r.author = b.author AND r.state = 'building') ORDER BY (SELECT COUNT(*) FROM builds o "
    "WHERE o.author = b.author AND o.state = 'queued' AND o.rowid < b.rowid), rowid LIMIT 1"
)


#: An upload's check status as its author sees it: 'building' while it waits for its build. SQL
#: on ``submissions s`` with :data:`JOIN`.
STATUS = "CASE WHEN s.status = 'queued' AND bs.state IN ('queued', 'building') THEN 'building' ELSE s.status END"
JOIN = "FROM submissions s LEFT JOIN builds bs ON bs.key = s.build"


def cache_folder(db: sqlite3.Connection) -> Path:
    """The contest's build cache: the folder ``builds`` beside the database ``db`` opened."""
    row = db.execute("SELECT file FROM pragma_database_list WHERE name = 'main'").fetchone()
    return Path(str(row[0])).parent / "builds"


def needs(source: bytes) -> tuple[str, str] | None:
    """(key, build command) of an upload's build; None when it needs none (a Python bot, a ``.js``
    file, a folder without ``build``, or bytes that are no readable bundle: its check says why)."""
    from ...errors import BotLoadError
    from ...sandbox.programs.buildcache import build_key
    from ...trust.botfolder import BUNDLE_MAGIC, MANIFEST, parse_manifest, unbundle

    if not source.startswith(BUNDLE_MAGIC.encode()):
        return None
    try:
        runtime, files = unbundle(source.decode("utf-8", "replace"), "upload")
        if runtime != "program":
            return None
        command = parse_manifest(dict(files)[MANIFEST], MANIFEST).get("build")
    except (BotLoadError, KeyError):
        return None
    return (build_key(command, dict(files)), command) if command is not None else None


def request(db: sqlite3.Connection, submission: int, author: int, source: bytes) -> None:
    """Name the build of ``submission`` and queue it if it is new (or failed before); inside the
    caller's write transaction."""
    found = needs(source)
    key = found[0] if found else ""
    db.execute("UPDATE submissions SET build = ? WHERE id = ?", (key, submission))
    if key:
        db.execute(
            "INSERT INTO builds (key, submission, author, queued) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE "
            "SET state = 'queued', submission = excluded.submission, author = excluded.author, error = NULL, "
            "attempts = 0, queued = excluded.queued WHERE state IN ('failed', 'evicted')",
            (key, submission, author, time.time()),
        )


def decide_missing(db: sqlite3.Connection, most: int = 20) -> int:
    """Look at up to ``most`` uploads whose build was never looked at (an older database's); how many."""
    rows = db.execute("SELECT id FROM submissions WHERE build IS NULL ORDER BY id LIMIT ?", (most,)).fetchall()
    for (sid,) in rows:
        with writing(db):
            row = db.execute("SELECT author, source FROM submissions WHERE id = ? AND build IS NULL", (sid,)).fetchone()
            if row is not None:
                request(db, int(sid), int(row["author"]), source_bytes(row["source"]))
    return len(rows)


def claim(db: sqlite3.Connection, worker: int) -> sqlite3.Row | None:
    """The next build (:data:`FAIR_NEXT`), now marked as being built by ``worker`` (a process id);
    a build whose worker died :data:`MAX_ATTEMPTS` times is failed instead."""
    with writing(db):
        while True:
            row = db.execute(FAIR_NEXT).fetchone()
            if row is None or row["attempts"] < MAX_ATTEMPTS:
                break
            why = f"the build failed: its worker died {MAX_ATTEMPTS} times building it"
            db.execute(
                "UPDATE builds SET state = 'failed', error = ?, finished = ? WHERE key = ?",
                (why, time.time(), row["key"]),
            )
        if row is not None:
            db.execute(
                "UPDATE builds SET state = 'building', claimed_by = ?, attempts = attempts + 1, started = ? "
                "WHERE key = ?",
                (worker, time.time(), row["key"]),
            )
    return row if isinstance(row, sqlite3.Row) else None


def finish(db: sqlite3.Connection, key: str, digest: str | None, error: str | None) -> None:
    """A build's outcome, once: the sha256 of its cached output, or its failure's line."""
    with writing(db):
        db.execute(
            "UPDATE builds SET state = ?, digest = ?, error = ?, claimed_by = NULL, finished = ? WHERE key = ?",
            (
                "failed" if error else "built",
                None if error else digest,
                escape(error, 600) if error else None,
                time.time(),
                key,
            ),
        )


def rebuild(db: sqlite3.Connection, key: str, digest: str | None) -> None:
    """The cached output of a built ``key`` (``digest``) is missing or damaged, or was evicted: queue
    it again (once, however many readers found it so)."""
    with writing(db):
        db.execute(
            "UPDATE builds SET state = 'queued', digest = NULL, attempts = 0, queued = ? "
            "WHERE key = ? AND ((state = 'built' AND digest IS ?) OR state = 'evicted')",
            (time.time(), key, digest),
        )


def wake(db: sqlite3.Connection, submissions: set[int]) -> None:
    """Queue again the evicted builds of ``submissions`` (versions the ladder would play)."""
    if submissions:
        marks = ",".join("?" * len(submissions))
        with writing(db):
            db.execute(
                "UPDATE builds SET state = 'queued', attempts = 0, queued = ? WHERE state = 'evicted' "
                f"AND key IN (SELECT build FROM submissions WHERE id IN ({marks}))",
                (time.time(), *submissions),
            )


#: The builds a version that plays or waits needs: a waiting check's, an active version's, a round's
#: field's (each found by an index: no scan of the uploads).
NEEDED = (
    "SELECT build FROM submissions WHERE status IN ('queued', 'checking') "
    "UNION SELECT s.build FROM bots b JOIN submissions s ON s.id = b.active "
    "UNION SELECT s.build FROM field f JOIN submissions s ON s.id = f.submission"
)


def evict(db: sqlite3.Connection, author: int) -> list[tuple[str, str]]:
    """Mark evicted the built builds of ``author`` that no version needs (:data:`NEEDED`) beyond
    their :data:`KEEP_RECENT` latest; the (key, digest) of each, whose files go unless a build
    still kept shares the digest. (A version that comes to need one later finds it evicted and
    has it built again: :func:`rebuild`, :func:`wake`.)"""
    with writing(db):  # no upload stored meanwhile could come to need one unseen
        rows = db.execute(
            "SELECT key, digest FROM builds WHERE author = ? AND state = 'built' ORDER BY finished DESC, rowid DESC",
            (author,),
        ).fetchall()
        needed = {r[0] for r in db.execute(NEEDED)} if len(rows) > KEEP_RECENT else set()
        gone = [(str(key), str(digest)) for key, digest in rows[KEEP_RECENT:] if key not in needed]
        for key, _ in gone:
            db.execute("UPDATE builds SET state = 'evicted', digest = NULL WHERE key = ?", (key,))
        kept = {r[0] for r in db.execute("SELECT digest FROM builds WHERE state = 'built'")} if gone else set()
    return [(key, digest) for key, digest in gone if digest not in kept]


def requeue(db: sqlite3.Connection, worker: int | None = None) -> int:
    """Put back in the queue the builds a dead worker (or any worker: None) had claimed."""
    with writing(db):
        cur = db.execute(
            "UPDATE builds SET state = 'queued', claimed_by = NULL WHERE state = 'building' "
            "AND (? IS NULL OR claimed_by = ?)",
            (worker, worker),
        )
        return cur.rowcount


def of(db: sqlite3.Connection, submission: int) -> sqlite3.Row | None:
    """The build row of ``submission`` (None: it needs none, or it was not looked at yet)."""
    row = db.execute(
        "SELECT b.* FROM submissions s JOIN builds b ON b.key = s.build WHERE s.id = ?", (submission,)
    ).fetchone()
    return row if isinstance(row, sqlite3.Row) else None


def unready(db: sqlite3.Connection, submissions: list[int]) -> set[int]:
    """Those of ``submissions`` that cannot play yet: their build is not built (or was never looked at)."""
    if not submissions:
        return set()
    marks = ",".join("?" * len(submissions))
    rows = db.execute(
        f"SELECT s.id FROM submissions s LEFT JOIN builds b ON b.key = s.build WHERE s.id IN ({marks}) "
        "AND (s.build IS NULL OR (s.build != '' AND (b.state IS NULL OR b.state != 'built')))",
        submissions,
    ).fetchall()
    return {int(r[0]) for r in rows}


def release_check(db: sqlite3.Connection, submission: int) -> None:
    """Put a claimed check back in the queue, its attempt not counted: its build is being made again."""
    with writing(db):
        db.execute(
            "UPDATE submissions SET status = 'queued', claimed_by = NULL, attempts = MAX(attempts - 1, 0) "
            "WHERE id = ? AND status = 'checking'",
            (submission,),
        )
