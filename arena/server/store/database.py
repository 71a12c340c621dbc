"""The contest database: one SQLite file (WAL) in the contest folder, opened only through this
module (:func:`open_db`), its schema made and upgraded only by this package (:mod:`.migrate`).

This module holds the queries the server's parts share (authors, submissions, games, ratings); the
other modules of :mod:`arena.server.store` hold their own tables'; a feature's own reads (the
contest's rounds and finals, the ladder's pace and retention, the pages) sit beside it and write
only through :func:`writing`.

Every write is one short ``BEGIN IMMEDIATE`` transaction, so a process killed at any
instant (the server, a check worker, a ladder worker; ``kill -9``) leaves the rows of
each finished step whole and none of a step it did not finish: an upload is stored before
it is answered, a check's report lands with its status in one transaction, a ladder game
and the rating updates it causes land together under the game's unique key (a game
written twice is refused by the key, so it is never counted twice).

The contest folder is created by ``arena contest init``; the database is read through
:func:`open_db`, which refuses a link, a FIFO or a file that is not a contest database in
one line (:class:`ContestError`), never a traceback.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...trust.files import NotRegularFile, regular
from ...trust.numbers import whole_number
from . import builds, versions
from . import outputs as outputs_of
from .basics import source_bytes as source_bytes
from .basics import writing as writing
from .migrate import LATEST, STEPS, upgrade

#: The database file inside a contest folder.
DB_NAME = "contest.db"
#: Bytes the WAL file keeps once a checkpoint emptied it (SQLite keeps its largest size otherwise).
WAL_LIMIT = 2**20
#: The schema :data:`SCHEMA` makes; :mod:`.migrate` upgrades it (and any older database) to its latest.
SCHEMA_VERSION = "1"

SCHEMA = """
CREATE TABLE contest (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE authors (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, token_hash TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE submissions (
    id INTEGER PRIMARY KEY, author INTEGER NOT NULL REFERENCES authors(id), bot TEXT NOT NULL,
    version INTEGER NOT NULL, sha256 TEXT NOT NULL, source BLOB NOT NULL, created REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'checking', 'clean', 'failed')),
    claimed_by INTEGER, attempts INTEGER NOT NULL DEFAULT 0, error TEXT, report TEXT, checked REAL,
    review TEXT NOT NULL DEFAULT 'pending' CHECK (review IN ('pending', 'approved', 'rejected')),
    comment TEXT NOT NULL DEFAULT '', UNIQUE (bot, version));
CREATE INDEX submissions_status ON submissions (status, id);
CREATE TABLE bots (
    name TEXT PRIMARY KEY, author INTEGER NOT NULL REFERENCES authors(id),
    active INTEGER REFERENCES submissions(id));
CREATE TABLE ratings (
    submission INTEGER PRIMARY KEY REFERENCES submissions(id), mu REAL NOT NULL, sigma REAL NOT NULL,
    games INTEGER NOT NULL DEFAULT 0);
CREATE TABLE blocks (id INTEGER PRIMARY KEY, size INTEGER NOT NULL, entrants TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE games (
    key TEXT PRIMARY KEY, block INTEGER NOT NULL REFERENCES blocks(id), rotation INTEGER NOT NULL,
    seating TEXT NOT NULL, places TEXT NOT NULL, scores TEXT NOT NULL, faults TEXT NOT NULL,
    log BLOB NOT NULL, finished REAL NOT NULL);
CREATE TABLE seats (
    game TEXT NOT NULL REFERENCES games(key), seat INTEGER NOT NULL, submission INTEGER NOT NULL,
    place INTEGER NOT NULL, mu REAL NOT NULL, sigma REAL NOT NULL, PRIMARY KEY (game, seat));
CREATE INDEX seats_submission ON seats (submission, game);
"""


#: Author names refused whatever their case: they would pass for the contest itself.
RESERVED_AUTHORS = frozenset({"organiser", "organizer", "admin", "administrator", "root", "arena", "server", "house"})


class ContestError(Exception):
    """A contest folder or database that cannot be used: the message says why, in one line."""


class TooMany(ContestError):
    """An upload past its author's limit per minute."""


class NotClean(ContestError):
    """An approval of a submission whose check is not clean."""


def token_hash(token: str) -> str:
    """How a token is stored: its sha256 (tokens are 256 random bits: no salt or stretching needed)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_token(prefix: str) -> str:
    """A fresh token ``PREFIX.SECRET``: the prefix names its row, the secret is 256 random bits."""
    return f"{prefix}.{secrets.token_urlsafe(32)}"


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA busy_timeout = 30000")
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA synchronous = NORMAL")  # WAL: a killed process loses no committed row
    db.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT}")  # the WAL left on disk after a checkpoint
    return db


def db_path(folder: str | os.PathLike[str]) -> Path:
    return Path(folder) / DB_NAME


def init_contest(folder: str | os.PathLike[str], name: str) -> str:
    """Create the contest folder and its database; return the organiser's token (stored as a hash).

    :raises ContestError: the folder holds a contest database, or cannot be made.
    """
    path = db_path(folder)
    if os.path.lexists(path):
        raise ContestError(f"{path} exists: this folder holds a contest already (never overwritten)")
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.close(fd)
    except OSError as exc:
        raise ContestError(f"{folder}: cannot create the contest: {exc.strerror or exc}") from None
    token = new_token("o")
    try:
        db = _connect(path)
        with db:
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # before any table: retention can give pages back
            db.execute("PRAGMA journal_mode = WAL")
            db.executescript("BEGIN;" + SCHEMA + "COMMIT;")
            values = {
                "schema": SCHEMA_VERSION,
                "name": name,
                "organiser_hash": token_hash(token),
                "session_key": secrets.token_urlsafe(32),
                "seed": str(secrets.randbits(128)),
                "frozen": "0",
            }
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT INTO contest VALUES (?, ?)", values.items())
            db.execute("COMMIT")
            upgrade(db)
        db.close()
    except sqlite3.Error as exc:
        os.unlink(path)  # ours, just made: no half-made contest left behind
        raise ContestError(f"{path}: cannot create the database: {exc}") from None
    return token


def open_db(folder: str | os.PathLike[str]) -> sqlite3.Connection:
    """The contest database of ``folder``, checked to be one.

    :raises ContestError: no contest there, a link or other non-file in its place, not a
        contest database, or one of another schema.
    """
    path = db_path(folder)
    try:
        regular(path, single_link=True)
    except FileNotFoundError:
        raise ContestError(f"{folder}: no contest here (run `arena contest init {folder}` first)") from None
    except NotRegularFile as exc:
        raise ContestError(str(exc)) from None
    except OSError as exc:
        raise ContestError(f"{path}: cannot open: {exc.strerror or exc}") from None
    try:
        db = _connect(path)  # WAL was set when the contest was made; it stays with the file
        row = db.execute("SELECT value FROM contest WHERE key = 'schema'").fetchone()
    except sqlite3.Error as exc:
        raise ContestError(f"{path}: not a contest database ({exc})") from None
    if row is None or (row[0] != LATEST and row[0] not in STEPS):
        db.close()
        raise ContestError(f"{path}: not a contest database of this arena (schema {row[0] if row else None!r})")
    try:
        upgrade(db)  # a database an older arena made: upgraded in place, one transaction a step
    except sqlite3.Error as exc:
        db.close()
        raise ContestError(f"{path}: cannot upgrade this contest database ({exc})") from None
    return db


def setting(db: sqlite3.Connection, key: str) -> str:
    row = db.execute("SELECT value FROM contest WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else ""


def set_setting(db: sqlite3.Connection, key: str, value: str) -> None:
    with writing(db):
        db.execute("INSERT OR REPLACE INTO contest VALUES (?, ?)", (key, value))


# -- who is asking ------------------------------------------------------------------------


def invite(db: sqlite3.Connection, name: str) -> str:
    """Add the author ``name``; return their token (stored only as a hash).

    :raises ContestError: the name is taken.
    """
    if name.lower() in RESERVED_AUTHORS:
        raise ContestError(f"{name!r} cannot name an author: it would pass for the contest's own")
    with writing(db):  # names compare ignoring case: "Ann" cannot pass for "ann"
        if db.execute("SELECT 1 FROM authors WHERE lower(name) = lower(?)", (name,)).fetchone():
            raise ContestError(f"an author named {name!r} exists already (names are compared ignoring case)")
        cur = db.execute("INSERT INTO authors (name, token_hash, created) VALUES (?, '', ?)", (name, time.time()))
        author = int(cur.lastrowid or 0)
        token = new_token(f"a{author}")
        db.execute("UPDATE authors SET token_hash = ? WHERE id = ?", (token_hash(token), author))
    return token


def who(db: sqlite3.Connection, token: str) -> tuple[str, int] | None:
    """``("organiser", 0)``, ``("author", id)`` or None for a token; the hashes are compared in
    constant time (:func:`hmac.compare_digest`), the row found by the token's prefix only."""
    prefix, _, _ = token.partition(".")
    given = token_hash(token)
    if prefix == "o":
        stored = setting(db, "organiser_hash")
        return ("organiser", 0) if stored and hmac.compare_digest(given, stored) else None
    number = whole_number(prefix[1:], given="text") if prefix[:1] == "a" else None  # "a²" is no id
    if number is not None:
        row = db.execute("SELECT token_hash FROM authors WHERE id = ? AND disabled IS NULL", (number,)).fetchone()
        if row is not None and hmac.compare_digest(given, str(row[0])):
            return ("author", number)
    hmac.compare_digest(given, given)  # the same work whichever way the token is wrong
    return None


def author_name(db: sqlite3.Connection, author: int) -> str:
    row = db.execute("SELECT name FROM authors WHERE id = ?", (author,)).fetchone()
    return str(row[0]) if row else "?"


# -- uploads and checks ---------------------------------------------------------------------


def add_submission(db: sqlite3.Connection, author: int, bot: str, source: bytes, per_minute: int = 0) -> int:
    """Store an upload, queued for its check; the next version of ``bot``. With ``per_minute``, the
    author's uploads of the last minute are counted in the same transaction as the insert (uploads
    sent at once cannot all pass a count made before any of them is stored).

    :raises TooMany: ``per_minute`` uploads in the last minute already.
    :raises versions.Identical: the bytes of a version of ``bot`` uploaded in this round (ruling 145).
    :raises ContestError: ``bot`` belongs to another author, or the contest is frozen.
    """
    sha = hashlib.sha256(source).hexdigest()
    with writing(db):
        if per_minute and uploads_since(db, author, time.time() - 60) >= per_minute:
            raise TooMany(f"at most {per_minute} uploads a minute; wait a little")
        if setting(db, "frozen") == "1":
            raise ContestError("submissions are frozen: uploads open again when the organiser lifts the freeze")
        owner = db.execute("SELECT author FROM bots WHERE name = ?", (bot,)).fetchone()
        if owner is not None and int(owner[0]) != author:
            raise ContestError(f"the bot name {bot!r} belongs to another author; choose another Bot.name")
        like = db.execute("SELECT name FROM bots WHERE lower(name) = lower(?) AND name != ?", (bot, bot)).fetchone()
        if like:  # "AnnBot" cannot pass for "annbot" (nor clash with it in a case-blind file system)
            raise ContestError(f"the bot name {bot!r} is taken as {like[0]!r} (ignoring case); choose another Bot.name")
        if owner is None:
            db.execute("INSERT INTO bots (name, author) VALUES (?, ?)", (bot, author))
        versions.refuse_identical(db, bot, sha)
        version = db.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM submissions WHERE bot = ?", (bot,)).fetchone()
        cur = db.execute(
            "INSERT INTO submissions (author, bot, version, sha256, source, created) VALUES (?, ?, ?, ?, ?, ?)",
            (author, bot, int(version[0]), sha, source, time.time()),
        )
        builds.request(db, int(cur.lastrowid or 0), author, source)  # its build queued with it, if it has one
        return int(cur.lastrowid or 0)


def uploads_since(db: sqlite3.Connection, author: int, since: float) -> int:
    row = db.execute("SELECT COUNT(*) FROM submissions WHERE author = ? AND created >= ?", (author, since)).fetchone()
    return int(row[0])


#: Checks of one upload that may die with their worker before the upload is failed (a poison upload).
MAX_ATTEMPTS = 3


#: The next upload to check: authors take turns (each author's k-th upload waiting, counting the one
#: being checked, comes after every author's (k-1)-th), oldest first within a turn; an author who
#: uploads as fast as the limit allows cannot make everyone else's checks wait behind theirs. An
#: upload whose build is not done waits (:data:`.builds.READY`), holding back no other upload. An
#: author has one check running at a time: a slow check (a bot within its move and game limits can
#: take minutes) holds one check worker, never another author's check (``--check-workers``, 2). Within
#: a turn, the author served longest ago goes first: a worker freed by an author's check never takes
#: that author's next upload before another author's waiting one.
FAIR_NEXT = (
    f"SELECT * FROM submissions s WHERE status = 'queued' AND {builds.READY} AND NOT EXISTS (SELECT 1 "
    "FROM submissions r WHERE r.author = s.author AND r.status = 'checking') ORDER BY (SELECT COUNT(*) "
    "FROM submissions o WHERE o.author = s.author AND o.status IN ('queued', 'checking') AND o.id < s.id), "
    "(SELECT COALESCE(MAX(l.checked), 0) FROM submissions l WHERE l.author = s.author), id LIMIT 1"
)


def claim_check(db: sqlite3.Connection, worker: int) -> sqlite3.Row | None:
    """The next upload to check (:data:`FAIR_NEXT`), now marked as being checked by ``worker`` (a process id). An
    upload whose check has killed its worker :data:`MAX_ATTEMPTS` times is failed instead, so
    one upload cannot stop the queue."""
    with writing(db):
        while True:
            row = db.execute(FAIR_NEXT).fetchone()
            if row is None or row["attempts"] < MAX_ATTEMPTS:
                break
            failed = f"the check failed: its worker died {MAX_ATTEMPTS} times checking this upload"
            sql = "UPDATE submissions SET status = 'failed', error = ?, checked = ? WHERE id = ?"
            db.execute(sql, (failed, time.time(), row["id"]))
        if row is not None:
            db.execute(
                "UPDATE submissions SET status = 'checking', claimed_by = ?, attempts = attempts + 1 WHERE id = ?",
                (worker, row["id"]),
            )
    return row if isinstance(row, sqlite3.Row) else None


def requeue(db: sqlite3.Connection, worker: int | None = None) -> int:
    """Put back in the queue the checks a dead worker (or any worker: None) had claimed."""
    with writing(db):
        if worker is None:
            cur = db.execute("UPDATE submissions SET status = 'queued', claimed_by = NULL WHERE status = 'checking'")
        else:
            cur = db.execute(
                "UPDATE submissions SET status = 'queued', claimed_by = NULL WHERE status = 'checking' "
                "AND claimed_by = ?",
                (worker,),
            )
        return cur.rowcount


def finish_check(db: sqlite3.Connection, submission: int, report: dict[str, Any], error: str | None) -> None:
    """The check's outcome, in one transaction: a clean upload becomes its bot's active version
    (with a fresh rating) unless the author chose one that is still playing."""
    from ..ladder.rating import START_MU, START_SIGMA

    with writing(db):
        status = "failed" if error else "clean"
        db.execute(
            "UPDATE submissions SET status = ?, error = ?, report = ?, checked = ?, claimed_by = NULL WHERE id = ?",
            (status, error, json.dumps(report), time.time(), submission),
        )
        if not error:
            db.execute(  # rated in the round it was uploaded in
                "INSERT OR IGNORE INTO ratings (round, submission, mu, sigma) VALUES "
                "((SELECT COALESCE(MAX(number), 1) FROM rounds WHERE first_submission <= ?), ?, ?, ?)",
                (submission, submission, START_MU, START_SIGMA),
            )
            db.execute(  # a house bot taken off the ladder meanwhile stays off (house.remove)
                "UPDATE bots SET active = ? WHERE name = (SELECT bot FROM submissions WHERE id = ?) "
                "AND COALESCE(house, '') NOT LIKE 'off:%'",
                (submission, submission),
            )


def submission(db: sqlite3.Connection, sid: int) -> sqlite3.Row | None:
    """The row of ``sid``; ``shown``: its status as its author sees it ('building': :data:`.builds.STATUS`)."""
    row = db.execute(f"SELECT s.*, {builds.STATUS} AS shown {builds.JOIN} WHERE s.id = ?", (sid,)).fetchone()
    return row if isinstance(row, sqlite3.Row) else None


def set_active(db: sqlite3.Connection, bot: str, sid: int) -> None:
    """Make the clean, not rejected version ``sid`` of ``bot`` its active one.

    :raises ContestError: no such version of this bot, not clean, or rejected."""
    with writing(db):
        row = db.execute("SELECT status, review FROM submissions WHERE id = ? AND bot = ?", (sid, bot)).fetchone()
        if row is None:
            raise ContestError(f"bot {bot!r} has no submission {sid}")
        if row["status"] != "clean" or row["review"] == "rejected":
            raise ContestError(f"submission {sid} is {row['status']}, {row['review']}: it cannot play")
        db.execute("UPDATE bots SET active = ? WHERE name = ?", (sid, bot))


def review(db: sqlite3.Connection, sid: int, verdict: str, comment: str) -> None:
    """The organiser's verdict; a rejected active version leaves the ladder (the bot goes back to
    its newest approved or pending clean version, or to none).

    :raises NotClean: an approval of a check that is not clean (queued, checking or failed).
    :raises ContestError: no such submission."""
    with writing(db):
        row = db.execute("SELECT bot, status FROM submissions WHERE id = ?", (sid,)).fetchone()
        if row is None:
            raise ContestError(f"no submission {sid}")
        if verdict == "approved" and row["status"] != "clean":
            raise NotClean(f"submission {sid}'s check is {row['status']}: only a clean check can be approved")
        db.execute("UPDATE submissions SET review = ?, comment = ? WHERE id = ?", (verdict, comment, sid))
        if verdict == "approved":  # a bot left without a version plays its approved one again
            db.execute(
                "UPDATE bots SET active = ? WHERE name = ? AND active IS NULL AND "
                "(SELECT status FROM submissions WHERE id = ?) = 'clean'",
                (sid, row["bot"], sid),
            )
        if verdict == "rejected":
            other = db.execute(
                "SELECT id FROM submissions WHERE bot = ? AND status = 'clean' AND review != 'rejected' "
                "ORDER BY version DESC LIMIT 1",
                (row["bot"],),
            ).fetchone()
            db.execute(
                "UPDATE bots SET active = ? WHERE name = ? AND active = ?",
                (other[0] if other else None, row["bot"], sid),
            )


# -- games ----------------------------------------------------------------------------------


def pack(log: list[dict[str, Any]]) -> bytes:
    return zlib.compress(json.dumps(log, separators=(",", ":")).encode(), 6)


def unpack(blob: bytes) -> list[dict[str, Any]]:
    """A stored game's events; an unreadable blob gives none."""
    try:
        data = json.loads(zlib.decompressobj().decompress(blob, 64 * 2**20))
    except (zlib.error, ValueError, RecursionError):
        return []
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def new_block(db: sqlite3.Connection, table: list[int], round_: int = 1) -> int:
    """A new block of ``round_``; 0 (nothing made) when that round is no longer the current one
    (a worker that chose its table just before the next round opened chooses again)."""
    with writing(db):
        if int(setting(db, "round") or 1) != round_:
            return 0
        cur = db.execute(
            "INSERT INTO blocks (size, entrants, created, round) VALUES (?, ?, ?, ?)",
            (len(table), json.dumps(table), time.time(), round_),
        )
        return int(cur.lastrowid or 0)


def record_game(
    db: sqlite3.Connection,
    key: str,
    block: int,
    rotation: int,
    seating: list[int],
    places: list[int],
    scores: list[int],
    faults: list[tuple[int, str, str, int]],
    log: list[dict[str, Any]],
    outputs: Sequence[str] = (),
) -> bool:
    """Store one finished ladder game, its seats' own outputs (:mod:`.outputs`) and its ratings (in its
    block's round), in one transaction. Returns False when the key is stored already (never counted twice)."""
    from ..ladder.rating import rate

    with writing(db):
        if db.execute("SELECT 1 FROM games WHERE key = ?", (key,)).fetchone():
            return False
        db.execute(
            "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                block,
                rotation,
                json.dumps(seating),
                json.dumps(places),
                json.dumps(scores),
                json.dumps(faults),
                pack(log),
                time.time(),
            ),
        )
        rnd = int(db.execute("SELECT round FROM blocks WHERE id = ?", (block,)).fetchone()[0])
        old = []
        for sid in seating:
            row = db.execute(  # numbers whatever the row holds (an edited database)
                "SELECT CAST(mu AS REAL), CAST(sigma AS REAL) FROM ratings WHERE round = ? AND submission = ?",
                (rnd, sid),
            ).fetchone()
            old.append((float(row[0]), float(row[1])) if row else None)
        new = rate([o for o in old if o is not None], [p for o, p in zip(old, places, strict=True) if o is not None])
        rated = iter(new)
        for seat, (sid, before) in enumerate(zip(seating, old, strict=True)):
            mu, sigma = next(rated) if before is not None else (0.0, 0.0)
            if before is not None:
                db.execute(
                    "UPDATE ratings SET mu = ?, sigma = ?, games = games + 1 WHERE round = ? AND submission = ?",
                    (mu, sigma, rnd, sid),
                )
            db.execute("INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?)", (key, seat, sid, places[seat], mu, sigma))
        outputs_of.insert(db, key, outputs)
    return True


def games_count(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
