"""The contest database's schema upgrades: a database an older arena made opens in this one.

Each step takes the schema from one version to the next in one ``BEGIN IMMEDIATE``
transaction, the version number included, so a process killed mid-upgrade leaves the old
schema whole (the next open upgrades it again), and two processes opening an old database at
once upgrade it once (the second finds the new version inside its own transaction).

Version 2 (rounds, issue 21 item 5): a ``rounds`` table (round one is the contest rules), the
``field`` of a round (the versions picked from the round before, by sha256), ratings kept
per round (``ratings`` keyed by round and submission; the old rows are round one's) and the
round of each ladder block (its games are rated in that round).

Version 3 (issue 27, items 4 and 5): a ``reviews`` table, the desk's view of each upload (its files
highlighted, its diff against the author's previous version) made once by the check worker and
served from here; ``authors.disabled``, when the organiser disabled an author (NULL: enabled);
``bots.house``, what a house bot (the organiser's own AI, :mod:`arena.server.contest.house`) plays:
``registered`` or ``file`` (``off:`` before it once removed; NULL: an author's bot).
Also (issue 30, item 2): ``outputs``, each ladder game's own output of a seat whose bot wrote any
(:mod:`.outputs`: its prints or standard error, bounded, for its author alone), stored with the
game and dropped with its record; and ``check_games``, the records of an upload's smoke games in
which it faulted (the first :data:`arena.authoring.check.KEPT_RECORDS`), so its author can replay them.
Also (issue 27, item 3): the ``builds`` queue (:mod:`.builds`: one row per build key, its state, the
sha256 of its cached output or its failure) and ``submissions.build``, the key of an upload's build
('' when it needs none, NULL until it is looked at: an older database's bot programs, looked at by
the workers).
Tables people play (issue 27 item 4, issue 30 item 4): ``live_tables``, each open table's seating
and secret seed, and ``table_moves``, each person's action at it with the game's events up to it
(what the tables worker needs to resume the game after a restart); ``table_games``, made on
first use before, is made here, with how each game ended (``outcome``: finished or abandoned).
Issue 30, items 1 and 3: ``game_order``, the order in which the ladder's games were stored (a
trigger numbers each new game; the games of an older database are numbered in their insertion
order), from which the ratings are recomputed exactly (:func:`arena.server.ladder.retention.recompute`)
whatever retention did to the games' rows; and ``events``, the server's log lines of what happened
(:mod:`arena.server.store.events`), which the desk's health reads.
"""

from __future__ import annotations

import json
import sqlite3
import time

from ...game.rules import CONTEST

#: The schema this arena writes; older ones are upgraded by :data:`STEPS` when opened.
LATEST = "3"

_TO_2 = (
    "CREATE TABLE rounds ("
    " number INTEGER PRIMARY KEY, rules TEXT NOT NULL, variant TEXT NOT NULL, settings TEXT NOT NULL,"
    " picked_by TEXT NOT NULL, first_submission INTEGER NOT NULL, closed TEXT, opened REAL NOT NULL)",
    "CREATE TABLE field ("
    " round INTEGER NOT NULL REFERENCES rounds(number), submission INTEGER NOT NULL REFERENCES submissions(id),"
    " rank INTEGER NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY (round, submission))",
    "CREATE TABLE ratings_by_round ("
    " round INTEGER NOT NULL, submission INTEGER NOT NULL REFERENCES submissions(id), mu REAL NOT NULL,"
    " sigma REAL NOT NULL, games INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (round, submission))",
    "INSERT INTO ratings_by_round SELECT 1, submission, mu, sigma, games FROM ratings",
    "DROP TABLE ratings",
    "ALTER TABLE ratings_by_round RENAME TO ratings",
    "ALTER TABLE blocks ADD COLUMN round INTEGER NOT NULL DEFAULT 1",
)


def _to_2(db: sqlite3.Connection) -> None:
    for statement in _TO_2:
        db.execute(statement)
    rules = json.dumps(CONTEST.to_dict())
    db.execute("INSERT INTO rounds VALUES (1, ?, 'contest', '[]', '', 0, NULL, ?)", (rules, time.time()))
    db.execute("INSERT OR REPLACE INTO contest VALUES ('round', '1')")


_TO_3 = (
    "CREATE TABLE reviews ("
    " submission INTEGER PRIMARY KEY REFERENCES submissions(id), data BLOB NOT NULL, made REAL NOT NULL)",
    "ALTER TABLE authors ADD COLUMN disabled REAL",
    "CREATE TABLE outputs ("
    " game TEXT NOT NULL REFERENCES games(key), seat INTEGER NOT NULL, text BLOB NOT NULL, PRIMARY KEY (game, seat))",
    "CREATE TABLE check_games ("
    " submission INTEGER NOT NULL REFERENCES submissions(id), game TEXT NOT NULL, seat INTEGER NOT NULL,"
    " log BLOB NOT NULL, output BLOB NOT NULL, PRIMARY KEY (submission, game))",
    "ALTER TABLE bots ADD COLUMN house TEXT",
    "CREATE TABLE builds ("
    " key TEXT PRIMARY KEY, submission INTEGER NOT NULL REFERENCES submissions(id),"
    " author INTEGER NOT NULL REFERENCES authors(id),"
    " state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'building', 'built', 'failed', 'evicted')),"
    " digest TEXT, error TEXT, claimed_by INTEGER, attempts INTEGER NOT NULL DEFAULT 0,"
    " queued REAL NOT NULL, started REAL, finished REAL)",
    "CREATE INDEX builds_state ON builds (state)",
    "ALTER TABLE submissions ADD COLUMN build TEXT",
    "CREATE INDEX submissions_build ON submissions (build)",  # the uploads not looked at, found without a scan
    "CREATE TABLE IF NOT EXISTS table_games ("
    " key TEXT PRIMARY KEY, seats TEXT NOT NULL, places TEXT NOT NULL, scores TEXT NOT NULL,"
    " faults TEXT NOT NULL, log BLOB NOT NULL, finished REAL NOT NULL)",
    "CREATE TABLE live_tables ("
    " key TEXT PRIMARY KEY, spec TEXT NOT NULL, state TEXT NOT NULL, seed TEXT, worker TEXT,"
    " resumes INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL)",
    "CREATE TABLE table_moves ("
    " key TEXT NOT NULL REFERENCES live_tables(key) ON DELETE CASCADE, n INTEGER NOT NULL,"
    " seat INTEGER NOT NULL, action TEXT NOT NULL, events BLOB NOT NULL, PRIMARY KEY (key, n))",
    "CREATE TABLE game_order (seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE)",
    "INSERT INTO game_order (key) SELECT key FROM games ORDER BY rowid",
    # A game reduced to its result is written again under its key: it keeps its number (OR IGNORE).
    "CREATE TRIGGER game_order_insert AFTER INSERT ON games BEGIN "
    "INSERT OR IGNORE INTO game_order (key) VALUES (NEW.key); END",
    "CREATE TABLE events (id INTEGER PRIMARY KEY, at REAL NOT NULL, level TEXT NOT NULL, text TEXT NOT NULL)",
)


def _to_3(db: sqlite3.Connection) -> None:
    for statement in _TO_3:
        db.execute(statement)
    # An upload that is no bot program's bundle needs no build; a bundle is looked at by the workers.
    magic = b"#arena-program 1\n"
    db.execute("UPDATE submissions SET build = '' WHERE CAST(substr(source, 1, ?) AS BLOB) != ?", (len(magic), magic))
    columns = {row[1] for row in db.execute("PRAGMA table_info(table_games)")}
    if "outcome" not in columns:  # made on first use by an older arena, or just above
        db.execute("ALTER TABLE table_games ADD COLUMN outcome TEXT NOT NULL DEFAULT 'finished'")


#: From each version, the step to the next one.
STEPS = {"1": ("2", _to_2), "2": ("3", _to_3)}


def version(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT value FROM contest WHERE key = 'schema'").fetchone()
    return str(row[0]) if row else None


def upgrade(db: sqlite3.Connection) -> None:
    """Bring the database to :data:`LATEST`, one transaction a step (a no-op when it is there).

    :raises sqlite3.Error: a step failed (its transaction rolled back: the database as it was).
    """
    while version(db) in STEPS:
        db.execute("BEGIN IMMEDIATE")
        try:
            now = version(db)  # another process may have upgraded it since we looked
            if now in STEPS:
                target, step = STEPS[now]
                step(db)
                db.execute("UPDATE contest SET value = ? WHERE key = 'schema'", (target,))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


#: Indexes the server's reads need as a ladder's games pile up (the leaderboard counts a round's
#: games: 0.12 s at 50 000 games without, 0.015 s with), made when the server starts.
INDEXES = (
    "CREATE INDEX IF NOT EXISTS games_block ON games (block)",
    # The games kept whole (retention reduces the others to their results): few, found at once.
    "CREATE INDEX IF NOT EXISTS games_whole ON games (key) WHERE length(log) > 0",
    "CREATE INDEX IF NOT EXISTS games_finished ON games (finished)",
    "CREATE INDEX IF NOT EXISTS events_at ON events (at)",
)


def add_indexes(db: sqlite3.Connection) -> None:
    """Make :data:`INDEXES` (an optimisation: a database that cannot be written is served without)."""
    try:
        db.execute("BEGIN IMMEDIATE")
        for statement in INDEXES:
            db.execute(statement)
        db.execute("COMMIT")
    except sqlite3.Error:
        if db.in_transaction:
            db.execute("ROLLBACK")
