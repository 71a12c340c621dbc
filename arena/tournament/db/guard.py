"""The machinery around a tournament database: which files SQLite opens, what its schema may
hold, how much work and memory a read may take, and how Ctrl-C stops it.

A database handed to the organiser is hostile, and not only its rows (those :mod:`.rows`
checks): its schema can make SQLite compute (generated columns, triggers, views, CHECK
constraints, expression indexes), the files beside it can block SQLite in ``open()`` for ever
(a FIFO named ``DB-wal``), and a crafted b-tree can make a read's work grow without bound.
So, for every connection this arena makes, reader or writer (docs/security/files.md, "Databases
are untrusted input"):

1. **Paths.** The database must be a regular file (``lstat``: not a symbolic link, FIFO,
   socket, device or folder; sniffed through :func:`arena.trust.files.read_untrusted`, which
   opens with ``O_NONBLOCK | O_NOFOLLOW``), and each file SQLite would open beside it
   (``-journal``, ``-wal``, ``-shm``) absent or a regular file (:func:`check_paths`).
2. **Connection.** ``trusted_schema=OFF``, ``cell_size_check=ON``, tight limits (a value's
   length, SQL length, expression depth, columns, no attached database), and a progress
   handler that makes SQLite stop when Ctrl-C or SIGTERM arrive (:func:`arena.playing.interrupts.
   interruptible`: Python cannot run a signal handler while SQLite works) or when a read's
   work budget is spent (:func:`guard`).
3. **Schema**, before any row is read or written (:func:`check_schema`): only the tables and
   indexes this arena makes, their columns as this arena makes them (``PRAGMA table_xinfo``:
   no generated or hidden column, no default), no CHECK constraint, no expression or partial
   index, no trigger, view or virtual table; a database a run writes to must hold this
   arena's very table definitions (``exact``). Then ``PRAGMA quick_check``: linear in the
   file (about 8 ms per MB measured, against 20 ms per MB to read the results), it refuses
   pages shared between b-trees and other damage before any read relies on them.
   Its tables are :data:`SCHEMA` and :data:`LATER_TABLES`, kept here so that the check and
   the writer share them.
4. **Rows** (:func:`read_rows`): fetched one at a time, counted in rows and in characters
   and bytes of text and blobs, refused past :data:`MAX_READ_BYTES` per connection.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import stat
import tempfile
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from ...playing.interrupts import interruptible, requested
from ...trust.files import NotRegularFile, kind_of, read_untrusted
from ...trust.text import escape


class TournamentDBError(Exception):
    """The database cannot be used: not one, foreign, damaged, or for another tournament."""


class DamagedDB(TournamentDBError):
    """A row or setting of the wrong type, range or shape."""


class SourceMismatch(TournamentDBError):
    """A stored bot source whose bytes do not hash to the sha256 stored with it."""


def damaged(table: str, what: str) -> DamagedDB:
    return DamagedDB(f"damaged tournament database: table {table}: {what}")


def show(value: object) -> str:
    """A stored value in an error line: its type for blobs, else a short printable repr."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"a blob of {len(value)} bytes"
    if isinstance(value, str) and len(value) > 40:
        value = value[:40] + "..."
    return escape(repr(value), 60)


#: The tables this arena makes (:mod:`.database` writes them; :func:`check_schema` allows nothing else).
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE bots (
    bot INTEGER PRIMARY KEY,          -- index in the command line's order, from 0
    label TEXT NOT NULL UNIQUE,       -- the name in standings
    name TEXT NOT NULL,               -- Bot.name (or the file name)
    path TEXT,                        -- bot file; NULL for registered bots
    origin TEXT NOT NULL,             -- 'file' or 'registry'
    sha256 TEXT NOT NULL              -- of the source
);
CREATE TABLE tables (
    size INTEGER NOT NULL, tbl INTEGER NOT NULL,
    bots TEXT NOT NULL,               -- JSON list of bot numbers
    PRIMARY KEY (size, tbl)
);
CREATE TABLE games (
    id INTEGER PRIMARY KEY,           -- 1 + the game's place in the schedule (key order)
    game_key TEXT NOT NULL UNIQUE,    -- '4p-t12-d3-r1' = size, table, deal, rotation
    size INTEGER NOT NULL, tbl INTEGER NOT NULL, deal INTEGER NOT NULL, rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,            -- the game seed (same for every rotation of a deal)
    rounds INTEGER NOT NULL, moves INTEGER NOT NULL,
    faults INTEGER NOT NULL,          -- faults in the game, all seats
    duration REAL NOT NULL,           -- seconds
    finished TEXT NOT NULL,           -- UTC time the result was stored
    UNIQUE (size, tbl, deal, rotation)
);
CREATE TABLE results (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL,
    bot INTEGER NOT NULL REFERENCES bots(bot),
    place INTEGER NOT NULL,           -- 1 = best (R9.1)
    score INTEGER NOT NULL,           -- final penalty score
    loser INTEGER NOT NULL,           -- 1 when over the limit
    faults INTEGER NOT NULL,
    retired INTEGER NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE TABLE faults (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL, bot INTEGER NOT NULL REFERENCES bots(bot),
    round INTEGER NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL
);
CREATE INDEX results_bot ON results (bot);
CREATE INDEX faults_game ON faults (game_id);
"""

#: Tables added after version 1 came out: made in new databases and in old ones a run
#: resumes, so a reader finds them in a database of any age or not at all.
LATER_TABLES = (
    # every bot's source, by the sha256 in ``bots``: a game can be re-played from its key
    "sources (sha256 TEXT PRIMARY KEY, source BLOB NOT NULL)",  # the bytes as read (loader.source_bytes)
    # per seat of a game: the bot's moves, their total and worst time in seconds
    "seat_times (game_id INTEGER NOT NULL REFERENCES games(id), seat INTEGER NOT NULL, "
    "moves INTEGER NOT NULL, seconds REAL NOT NULL, worst REAL NOT NULL, PRIMARY KEY (game_id, seat))",
)


#: The longest text or blob SQLite hands a reader (bytes; a source is at most 256 KiB).
MAX_VALUE = 4 << 20
#: Text and blobs one connection may read in all (characters and bytes).
MAX_READ_BYTES = 256 << 20
#: SQLite's progress handler runs every this many virtual-machine instructions (one "tick").
TICK = 1000
#: A read's work budget, in ticks: this many per row the read may return, plus a base.
TICKS_PER_ROW, TICKS_BASE = 1, 10_000
#: quick_check's budget, in ticks per MiB of database and WAL (it took 317 per MiB measured).
CHECK_TICKS_PER_MIB = 2000
#: The files SQLite may open beside a database.
SIDE_FILES = ("-journal", "-wal", "-shm")
#: SQLite's limits on every connection: nothing this arena writes or reads comes near them.
LIMITS = {
    sqlite3.SQLITE_LIMIT_LENGTH: MAX_VALUE,
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: 100_000,
    sqlite3.SQLITE_LIMIT_COLUMN: 64,
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 100,
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 4,
    sqlite3.SQLITE_LIMIT_FUNCTION_ARG: 8,
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
    sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 1,
    sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER: 1000,
    sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,
}


class GuardedConnection(sqlite3.Connection):
    """A connection with its read budget, bytes read and private snapshot folder (if any)."""

    ticks_left: int | None = None  # of the read under way; None: no budget
    spent: bool = False  # the last budget ran out
    bytes_read: int = 0
    private: str | None = None  # a snapshot's folder, removed on close

    def close(self) -> None:
        super().close()
        if self.private:
            shutil.rmtree(self.private, ignore_errors=True)
            self.private = None


def guard(conn: GuardedConnection) -> GuardedConnection:
    """Limits, pragmas and the progress handler; before the first statement (which reads the schema)."""
    for limit, value in LIMITS.items():
        conn.setlimit(limit, value)

    def progress() -> int:
        if requested():
            return 1
        if conn.ticks_left is not None:
            conn.ticks_left -= 1
            if conn.ticks_left < 0:
                conn.spent = True
                return 1
        return 0

    conn.set_progress_handler(progress, TICK)
    conn.execute("PRAGMA trusted_schema = OFF")
    conn.execute("PRAGMA cell_size_check = ON")
    return conn


@contextmanager
def budget(conn: sqlite3.Connection, ticks: int) -> Iterator[None]:
    """SQLite work of at most ``ticks`` (of :data:`TICK` instructions), stopped by Ctrl-C or SIGTERM."""
    if not isinstance(conn, GuardedConnection):  # a connection this arena did not open: no budget
        with interruptible():
            yield
        return
    conn.ticks_left, conn.spent = ticks, False
    try:
        with interruptible():
            yield
    finally:
        conn.ticks_left = None


def _refuse(path: Path, what: str) -> TournamentDBError:
    return TournamentDBError(f"{path}: {what}")


def check_paths(path: Path, *, exists: bool = True) -> dict[str, int]:
    """The sizes of the side files present (``{"-wal": 4120}``); the database itself (when
    ``exists``) a regular file starting as SQLite files do (or empty).

    :raises TournamentDBError: one line naming the file at fault.
    """
    if exists:
        try:
            data = read_untrusted(path, 15).data
        except FileNotFoundError:
            raise _refuse(path, "no such file") from None
        except NotRegularFile as exc:
            raise TournamentDBError(f"{exc.path}: {exc.reason.replace('a regular file', 'a database file')}") from None
        except OSError as exc:
            raise _refuse(path, f"cannot read: {exc.strerror}") from None
        if data and data != b"SQLite format 3\x00":
            raise _refuse(path, "not an SQLite database")
    sides: dict[str, int] = {}
    for suffix in SIDE_FILES:
        side = Path(f"{path}{suffix}")
        try:
            info = os.lstat(side)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise _refuse(side, f"cannot read: {exc.strerror}") from None
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(
                side, f"{kind_of(info.st_mode)} where SQLite keeps the {suffix[1:]} file of {path.name}; remove it"
            )
        if info.st_nlink > 1:  # SQLite writes -shm (and -wal) in place: never into another name's file
            raise _refuse(side, f"a hard link where SQLite keeps the {suffix[1:]} file of {path.name}; remove it")
        if suffix == "-journal" and info.st_size > 0:
            # A rollback journal is never this arena's (it keeps its databases in WAL mode), and
            # rolling one back is not reading: it rewrites pages, opens the files the journal
            # names (a FIFO there blocks) and deletes its "super-journal", any path it names.
            raise _refuse(
                side,
                f"a rollback journal beside {path.name}: a write by another program was cut off; "
                "this arena does not roll it back (move the journal away to read the database as it is)",
            )
        sides[suffix] = info.st_size
    return sides


def _copy(src: Path, dst: Path) -> None:
    """Copy a regular file (checked again on the open descriptor) into the private folder."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(src, flags)
    except OSError as exc:
        raise _refuse(src, f"cannot read: {exc.strerror}") from None
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _refuse(src, "replaced by another kind of file while it was being read")
        with open(dst, "xb") as out:
            shutil.copyfileobj(f, out)


def connect_readonly(path: Path) -> GuardedConnection:
    """A guarded connection that reads ``path`` and creates no file beside it.

    No ``-wal`` or ``-journal`` beside it: opened ``immutable``, so SQLite takes no lock and
    opens no side file (read-only media work). That is safe because no writer can be at work:
    this arena's writer keeps the database in WAL mode, where a ``-wal`` file exists for as
    long as any connection has it open; a writer that starts while we read writes into its
    ``-wal``, and at worst a checkpoint under us makes a read fail as damaged, never unbounded.
    A ``-wal`` with its ``-shm``: a run is writing (or was killed); read through SQLite's
    read-only mode, which uses both. A ``-wal`` without ``-shm`` (SQLite would create one), or
    a ``-journal`` (a write cut off: SQLite must roll it back first): the files are copied to
    a private folder, read there, and the folder removed on close.
    """
    sides = check_paths(path)
    private = None
    if "-journal" in sides or ("-wal" in sides and "-shm" not in sides):
        private = tempfile.mkdtemp(prefix="arena-db-")
        try:
            copy = Path(private) / "db.sqlite"
            for suffix in ("", *(s for s in sides if s != "-shm")):
                _copy(Path(f"{path}{suffix}"), Path(f"{copy}{suffix}"))
        except OSError as exc:  # a full temporary folder...
            shutil.rmtree(private, ignore_errors=True)
            raise _refuse(path, f"cannot copy it to read it ({exc.strerror})") from None
        except BaseException:
            shutil.rmtree(private, ignore_errors=True)
            raise
        uri = copy.as_uri()
    else:
        uri = path.resolve().as_uri() + ("?mode=ro" if "-wal" in sides else "?immutable=1")
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, factory=GuardedConnection)
    except sqlite3.Error as exc:
        if private:
            shutil.rmtree(private, ignore_errors=True)
        raise _refuse(path, f"cannot open: {exc}") from None
    if private:
        conn.private = private
        weakref.finalize(conn, shutil.rmtree, private, True)  # also when a caller never closes it
    try:
        guard(conn)
        conn.execute("PRAGMA query_only = ON")
        conn.execute("BEGIN DEFERRED")  # one snapshot, from the first read on (WAL: writers go on)
    except sqlite3.Error as exc:
        conn.close()
        raise _refuse(path, f"cannot open: {exc}") from None
    return conn


# -- the schema ---------------------------------------------------------------------------


def _code(sql: str) -> str:
    """SQL text without ``--`` comments, in one case, with its spacing made canonical."""
    sql = re.sub(r"--[^\n]*", " ", sql)
    sql = re.sub(r"\s+", " ", sql).strip().lower()
    return re.sub(r"\s*([(),;])\s*", r"\1", sql)


@cache
def expected() -> tuple[dict[str, tuple[str, ...]], dict[str, str], dict[str, str | None]]:
    """This arena's tables (name -> column names), their SQL text (:func:`_code`) and its
    indexes (name -> SQL text; None for those SQLite makes for UNIQUE and PRIMARY KEY)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(SCHEMA + "".join(f"CREATE TABLE {t};" for t in LATER_TABLES))
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        names = [name for kind, name, _ in rows if kind == "table"]
        tables = {name: tuple(r[1] for r in conn.execute(f"PRAGMA table_xinfo({name})")) for name in names}
    finally:
        conn.close()
    sqls = {name: _code(sql) for kind, name, sql in rows if kind == "table"}
    return tables, sqls, {name: sql and _code(sql) for kind, name, sql in rows if kind == "index"}


def _schema_damage(what: str) -> DamagedDB:
    return DamagedDB(f"damaged tournament database: {what}; a tournament database has no such thing")


def check_schema(conn: sqlite3.Connection, *, exact: bool = False) -> set[str]:
    """The names of the database's tables, once its schema is known to be this arena's; or,
    for an empty database or another program's (no table ``meta``), without checking more.

    :raises DamagedDB: anything this arena does not make (see the module's docstring).
    :raises sqlite3.DatabaseError: SQLite cannot read the schema.
    """
    with budget(conn, TICKS_BASE):
        rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master LIMIT 101").fetchall()
    names = {name for kind, name, _, _ in rows if kind == "table"}
    if "meta" not in names:
        return names
    if len(rows) > 100:
        raise _schema_damage("more than 100 tables and indexes")
    tables, sqls, indexes = expected()
    for kind, name, table, sql in rows:
        if kind == "table":
            if name not in tables:
                raise _schema_damage(f"table {show(name)}")
            code = _code(sql) if isinstance(sql, str) else ""
            if not code.startswith("create table "):
                raise _schema_damage(f"table {show(name)} made by {show(sql)}")
            if re.search(r"\bcheck\b", re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\[[^\]]*\]", "", code)):
                raise _schema_damage(f"a CHECK constraint in table {name}")
            columns = conn.execute(f"PRAGMA table_xinfo({name})").fetchall()
            if tuple(c[1] for c in columns) != tables[name]:
                raise _schema_damage(f"table {name} with columns {show(', '.join(str(c[1]) for c in columns))}")
            if any(c[6] != 0 or c[4] is not None for c in columns):
                raise _schema_damage(f"a generated, hidden or default column in table {name}")
            if any(fk[5:7] != ("NO ACTION", "NO ACTION") for fk in conn.execute(f"PRAGMA foreign_key_list({name})")):
                raise _schema_damage(f"a foreign key action in table {name}")
            if exact and code != sqls[name]:
                raise _schema_damage(f"table {name} made otherwise than this arena makes it ({show(sql)})")
        elif kind == "index":
            made = _code(sql) if isinstance(sql, str) else None
            if name not in indexes or made != indexes[name] or table not in tables:
                raise _schema_damage(f"index {show(name)} on table {show(table)} ({show(sql)})")
        else:  # a trigger, a view
            raise _schema_damage(f"a {escape(kind, 20)} {show(name)} on table {show(table)}")
    _quick_check(conn)
    return names


def _quick_check(conn: sqlite3.Connection) -> None:
    (size,) = conn.execute("PRAGMA page_count").fetchone()
    (page,) = conn.execute("PRAGMA page_size").fetchone()
    try:
        with budget(conn, TICKS_BASE + CHECK_TICKS_PER_MIB * (size * page >> 20)):
            result = conn.execute("PRAGMA quick_check(1)").fetchone()
    except sqlite3.OperationalError:
        if isinstance(conn, GuardedConnection) and conn.spent:
            raise DamagedDB("damaged tournament database: checking it took more work than its size allows") from None
        raise
    if result != ("ok",):
        raise DamagedDB(f"damaged tournament database: SQLite's check says {show(result and result[0])}")


# -- rows ---------------------------------------------------------------------------------


def read_rows(conn: sqlite3.Connection, table: str, sql: str, args: Sequence[Any] = (), *, limit: int) -> list[Any]:
    """The rows of ``sql`` over ``table`` (a real table, at most ``limit`` rows, the text and
    blobs of all reads through ``conn`` at most :data:`MAX_READ_BYTES`).

    :raises DamagedDB: no such table, too many rows or bytes, too much work, or SQLite cannot read it.
    """
    guarded = conn if isinstance(conn, GuardedConnection) else None
    read = guarded.bytes_read if guarded else 0
    try:
        kind = conn.execute("SELECT type FROM sqlite_master WHERE name = ? COLLATE NOCASE", (table,)).fetchone()
        if kind is None:
            raise damaged(table, "missing")
        if kind[0] != "table":
            raise damaged(table, f"is a {show(kind[0])}, not a table")
        out: list[Any] = []
        append, most, sized = out.append, MAX_READ_BYTES, (str, bytes)
        with budget(conn, TICKS_BASE + TICKS_PER_ROW * (limit + 1)):
            for row in conn.execute(sql, tuple(args)):  # one row at a time: counted before the next
                append(row)
                for value in row:
                    if type(value) in sized:
                        read += len(value)
                if read > most:
                    raise damaged(table, f"more than {most >> 20} MiB of text and blobs in the database")
                if len(out) > limit:
                    raise damaged(table, f"more than {limit} rows; a tournament has at most {limit}")
        if guarded:
            guarded.bytes_read = read
        return out
    except sqlite3.DatabaseError as exc:
        if guarded and guarded.spent:
            raise damaged(table, "reading it took more work than its rows allow") from None
        reason = str(exc).split(" with text ")[0]  # SQLite's decoding errors quote the text: not shown
        raise damaged(table, f"cannot read it ({escape(reason, 120)})") from None
