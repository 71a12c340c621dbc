"""A hostile tournament database must not hang, exhaust memory or be written through hidden
machinery (issue 17 follow-up; docs/security/files.md, "Databases are untrusted input").

The red team's attacks, each made small: a schema whose columns compute (generated columns
installed through ``writable_schema``), a trigger on ``games`` that rewrites what a resume
stores, CHECK constraints, expression indexes, views and virtual tables; FIFOs, folders and
symbolic links where SQLite opens the database or its ``-journal``/``-wal``/``-shm``; a read
that never ends; values that add up to more memory than a reader should take; a ``-wal``
without its ``-shm`` and a hot ``-journal`` (read-only commands must leave no file and name
the right one). Every expression planted here raises if SQLite ever evaluates it, so a
refusal that comes after an evaluation shows up as the wrong message.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import struct
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.cli import run_here as run

from arena.playing.interrupts import Terminated, interruptible, sigterm_as_ctrl_c
from arena.tournament.db import guard as dbguard
from arena.tournament.db.guard import read_rows
from arena.tournament.db.read import open_readonly

#: Raises "integer overflow" when evaluated: a planted expression that must never run.
BOOM = "abs(-9223372036854775807 - 1)"
RESUME = ("tournament", "greedy", "random", "-n", "2", "--seed", "5", "-q", "--db")


def refused(code: int, err: str, *words: str) -> bool:
    line = err.splitlines()[-1] if err else ""
    return (
        code == 2
        and line.startswith("arena: error: ")
        and err.count("arena: error") == 1
        and "Traceback" not in err
        and all(w in line for w in words)
    )


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("honest") / "t.sqlite"
    code, _, err = run(*RESUME, str(db))
    assert code == 0, err
    return db


@pytest.fixture
def db(honest: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "t.sqlite"
    shutil.copy(honest, copy)
    return copy


def readers(db: Path, tmp_path: Path) -> list[tuple[str, ...]]:
    """Every command that reads a database: standings, report, replay and view by key, a resume."""
    return [
        ("standings", str(db)),
        ("report", "--db", str(db), "--out", str(tmp_path / "site"), "-q"),
        ("replay", "--db", str(db), "--game", "2p-t0-d0-r0"),
        ("view", "--db", str(db), "--game", "2p-t0-d0-r0", "--out", str(tmp_path / "v.html")),
        (*RESUME, str(db)),
    ]


def swap_schema(db: Path, name: str, sql: str) -> None:
    """Replace the definition of ``name`` as the red team did (``PRAGMA writable_schema``): no
    row is rewritten, so values are read through the new definition."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?", (sql, name))
    (version,) = conn.execute("PRAGMA schema_version").fetchone()
    conn.execute(f"PRAGMA schema_version = {version + 1}")
    conn.commit()
    conn.close()


def drop_last_game(db: Path) -> None:
    """So that a resume has a game to store."""
    conn = sqlite3.connect(db)
    with conn:
        (gid,) = conn.execute("SELECT MAX(id) FROM games").fetchone()
        for table in ("results", "faults", "seat_times"):
            conn.execute(f"DELETE FROM {table} WHERE game_id = ?", (gid,))
        conn.execute("DELETE FROM games WHERE id = ?", (gid,))
    conn.close()


def execute(db: Path, *sql: str) -> None:
    conn = sqlite3.connect(db)
    for statement in sql:
        conn.execute(statement)
    conn.commit()
    conn.close()


def plant(db: Path, honest: str, evil: str) -> None:
    """Make an index with ``honest`` SQL (SQLite evaluates it once), then swap in ``evil``."""
    execute(db, honest)
    swap_schema(db, honest.split()[2], evil)


# -- the schema: nothing computes, nothing runs on its own ---------------------------------

MACHINERY: dict[str, Callable[[Path], None]] = {
    "virtual generated column": lambda db: swap_schema(
        db, "meta", f"CREATE TABLE meta (key TEXT PRIMARY KEY, v TEXT, value TEXT GENERATED ALWAYS AS ({BOOM}) VIRTUAL)"
    ),
    "stored generated column": lambda db: swap_schema(
        db, "meta", f"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT, g TEXT AS ({BOOM}) STORED)"
    ),
    "trigger": lambda db: execute(
        db,
        "CREATE TRIGGER t AFTER INSERT ON games BEGIN UPDATE results SET score = 0; "
        "INSERT INTO meta VALUES ('x', 'y'); END",
    ),
    "CHECK constraint": lambda db: swap_schema(
        db, "meta", f"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL CHECK ({BOOM} > 0))"
    ),
    "expression index": lambda db: plant(
        db, "CREATE INDEX boom ON games (seed + 0)", f"CREATE INDEX boom ON games ({BOOM} + seed)"
    ),
    "partial index": lambda db: plant(
        db,
        "CREATE INDEX bots2 ON results (bot) WHERE bot >= 0",
        f"CREATE INDEX bots2 ON results (bot) WHERE {BOOM} > 0",
    ),
    "view": lambda db: execute(db, f"CREATE VIEW v AS SELECT {BOOM}"),
    "virtual table": lambda db: execute(db, "CREATE VIRTUAL TABLE notes USING fts5(x)"),
    "other table": lambda db: execute(db, "CREATE TABLE notes (x)"),
    "default": lambda db: swap_schema(
        db, "meta", f"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL DEFAULT ({BOOM}))"
    ),
}


@pytest.mark.parametrize("kind", sorted(MACHINERY))
def test_a_schema_with_machinery_is_refused_before_any_row_is_read(kind: str, db: Path, tmp_path: Path) -> None:
    drop_last_game(db)
    MACHINERY[kind](db)
    before = db.read_bytes()
    for argv in readers(db, tmp_path):
        code, out, err = run(*argv)
        assert refused(code, err, str(db), "damaged tournament database", "no such thing"), (kind, argv, err)
        assert "overflow" not in err  # the planted expression never ran
    assert db.read_bytes() == before  # nothing stored, nothing rolled back into it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.sqlite"]


def test_a_resume_needs_this_arenas_very_tables_but_a_reader_takes_a_loose_copy(db: Path) -> None:
    # ON CONFLICT REPLACE would let a stored game silently replace another: no machinery a
    # reader minds (values are checked), but a run only writes where tables are its own.
    drop_last_game(db)
    conn = sqlite3.connect(db)
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'games'").fetchone()
    conn.close()
    swap_schema(db, "games", sql.replace("id INTEGER PRIMARY KEY", "id INTEGER PRIMARY KEY ON CONFLICT REPLACE"))
    code, out, err = run("standings", str(db))
    assert code == 0 and "partial: 3 of 4" in out, err
    code, _, err = run(*RESUME, str(db))
    assert refused(code, err, "table games made otherwise than this arena makes it"), err


def test_a_shared_page_is_caught_before_a_read_relies_on_it(db: Path) -> None:
    # Point the games table's root at the results table's: a read would walk another tree.
    conn = sqlite3.connect(db)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'results'").fetchone()
    conn.close()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = 'games'", (root,))
    conn.commit()
    conn.close()
    code, _, err = run("standings", str(db))
    assert refused(code, err, "SQLite's check says"), err


# -- what SQLite opens ----------------------------------------------------------------------


def promptly(fifos: list[Path], call: Callable[[], tuple[int, str, str]]) -> tuple[int, str, str]:
    """``call()`` in a thread: it must return although nobody writes the FIFOs (if it blocks,
    they are opened for writing so the thread ends, and the test fails)."""
    box: list[tuple[int, str, str]] = []
    thread = threading.Thread(target=lambda: box.append(call()), daemon=True)
    thread.start()
    thread.join(30)
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail("blocked on a FIFO")
    return box[0]


@pytest.mark.parametrize("suffix", ["", "-journal", "-wal", "-shm"])
def test_a_fifo_where_sqlite_opens_a_file_is_refused_naming_it(suffix: str, db: Path, tmp_path: Path) -> None:
    target = Path(f"{db}{suffix}")
    if not suffix:
        db.unlink()
    os.mkfifo(target)
    for argv in readers(db, tmp_path):
        code, _, err = promptly([target], lambda argv=argv: run(*argv))  # type: ignore[misc]
        assert refused(code, err, f"{target}: a FIFO (named pipe)"), (argv, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({db.name, target.name})


def test_a_new_database_beside_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "new.sqlite-wal"
    os.mkfifo(fifo)
    code, _, err = promptly([fifo], lambda: run(*RESUME, str(tmp_path / "new.sqlite")))
    assert refused(code, err, f"{fifo}: a FIFO"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.sqlite-wal"]


@pytest.mark.parametrize("suffix", ["", "-wal"])
def test_folders_and_links_in_sqlites_place_are_named(suffix: str, db: Path, tmp_path: Path) -> None:
    side = Path(f"{db}{suffix}")
    other = tmp_path / "elsewhere"
    if suffix:
        side.mkdir()
        code, _, err = run("standings", str(db))  # was: "its t.sqlite-wal file ... on read-only media"
        assert refused(code, err, f"{side}: a folder") and "read-only" not in err, err
        side.rmdir()
        shutil.copy(db, other)
    else:
        db.rename(other)
    side.symlink_to(other)
    code, _, err = run("standings", str(db))
    assert refused(code, err, f"{side}: a symbolic link"), err


# -- read-only commands leave no file -------------------------------------------------------


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_a_wal_without_its_shm_is_read_from_a_private_copy(db: Path, tmp_path: Path) -> None:
    # A run killed with its last game only in the -wal: copy the files as the kernel left them.
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(db, work / "w.sqlite")
    drop_last_game(work / "w.sqlite")
    conn = sqlite3.connect(work / "w.sqlite", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("UPDATE bots SET name = 'renamed' WHERE bot = 0")  # in the -wal only
    media = tmp_path / "media"
    media.mkdir()
    for name in ("w.sqlite", "w.sqlite-wal"):
        shutil.copy(work / name, media / name)
    conn.close()
    before = listing(media)
    code, out, err = run("standings", str(media / "w.sqlite"), "--format", "json")
    assert code == 0 and '"name": "renamed"' in out and '"games": 3' in out, err
    assert listing(media) == before  # no -shm made, nothing checkpointed


def super_journal(db: Path, named: Path) -> None:
    """A hot rollback journal beside ``db`` whose super-journal pointer names ``named``: SQLite's
    rollback of it opens that path and then deletes it (red team, round 2: any file the
    organiser may delete, from the read-only ``standings``)."""
    name = str(named).encode()
    magic = bytes([0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7])
    check = sum(b if b < 128 else b - 256 for b in name) & 0xFFFFFFFF
    body = b"X" * 4 + struct.pack(">I", 0) + name + struct.pack(">II", len(name), check) + magic
    Path(f"{db}-journal").write_bytes(body)


def test_a_rollback_journal_is_refused_never_rolled_back(db: Path, tmp_path: Path) -> None:
    # A write cut off in rollback mode (never this arena's: it writes in WAL mode): its journal.
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("PRAGMA cache_size = 1")
    conn.execute("BEGIN")
    conn.execute("UPDATE bots SET label = 'EVIL' || label")
    conn.execute("CREATE TABLE pad AS SELECT hex(zeroblob(100000)) AS x")  # spills the change into the file
    media = tmp_path / "media"
    media.mkdir()
    for name in ("t.sqlite", "t.sqlite-journal"):
        shutil.copy(tmp_path / name, media / name)
    conn.rollback()
    conn.close()
    before = listing(media)
    for argv in readers(media / "t.sqlite", tmp_path):
        code, out, err = run(*argv)
        assert code == 2 and out == "" and err.count("\n") == 1 and "rollback journal" in err, (argv, err)
    assert listing(media) == before


def test_a_journal_naming_a_victim_or_a_fifo_deletes_and_blocks_nothing(db: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the organiser's file\n")
    super_journal(db, victim)
    for argv in readers(db, tmp_path):
        code, out, err = run(*argv)
        assert code == 2 and err.count("\n") == 1 and "rollback journal" in err, (argv, err)
        assert victim.read_text() == "the organiser's file\n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    super_journal(db, fifo)
    done: list[tuple[int, str, str]] = []
    worker = threading.Thread(target=lambda: done.append(run("standings", str(db))), daemon=True)
    worker.start()
    worker.join(60)  # generous: it must not wait on the FIFO at all
    assert done and done[0][0] == 2 and "rollback journal" in done[0][2]


def test_a_hard_link_where_sqlite_writes_its_side_files_is_refused(db: Path, tmp_path: Path) -> None:
    other = tmp_path / "someone-elses.bin"
    other.write_bytes(b"\0" * 32768)
    os.link(other, f"{db}-shm")
    Path(f"{db}-wal").write_bytes(b"")
    code, out, err = run("standings", str(db))
    assert code == 2 and err.count("\n") == 1 and "hard link" in err, err
    assert other.read_bytes() == b"\0" * 32768


# -- work, signals and memory ---------------------------------------------------------------

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x, x FROM c WHERE x < 0"


@contextlib.contextmanager
def safety_net(conn: sqlite3.Connection, seconds: float = 20) -> Iterator[threading.Timer]:
    """Interrupt ``conn`` after ``seconds`` whatever happens, so a failing test cannot hang."""
    timer = threading.Timer(seconds, conn.interrupt)
    timer.start()
    try:
        yield timer
    finally:
        timer.cancel()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_sqlite_at_once(signum: int, honest: Path) -> None:
    """SQLite works in C, where Python never runs a signal handler: the arena's progress
    handler must stop the read when Ctrl-C or SIGTERM arrive, and the signal be raised."""
    conn, _ = open_readonly(honest)
    killer = threading.Timer(0.3, os.kill, (os.getpid(), signum))
    expected = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
    try:
        with safety_net(conn), sigterm_as_ctrl_c(), pytest.raises(expected):
            killer.start()
            read_rows(conn, "meta", ENDLESS, limit=10**15)  # a budget that would last hours
    finally:
        killer.cancel()
        conn.close()


def test_an_ignored_signal_stays_ignored_and_a_held_one_is_raised_at_the_end() -> None:
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as under nohup, or a background job
    try:
        with interruptible():
            signal.raise_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, old)
    done = []
    with pytest.raises(KeyboardInterrupt), interruptible():
        signal.raise_signal(signal.SIGINT)
        done.append(True)  # held: the block goes on to its end
    assert done


def test_a_read_stops_when_its_work_budget_is_spent(honest: Path) -> None:
    conn, _ = open_readonly(honest)
    try:
        with safety_net(conn), pytest.raises(dbguard.DamagedDB, match="more work than its rows allow"):
            read_rows(conn, "meta", ENDLESS, limit=1000)
    finally:
        conn.close()


def test_many_large_values_are_refused_before_they_are_all_held(
    db: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    execute(db, *(f"INSERT INTO meta VALUES ('junk{i}', hex(zeroblob(50000)))" for i in range(40)))  # 4 MB
    assert run("standings", str(db))[0] == 0  # under the documented bound: read
    monkeypatch.setattr(dbguard, "MAX_READ_BYTES", 1 << 20)
    tracemalloc.start()
    try:
        code, _, err = run("standings", str(db))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert refused(code, err, "table meta: more than 1 MiB of text and blobs"), err
    assert peak < 3_000_000  # the 4 MB of values were never all held
