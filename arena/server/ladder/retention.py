"""What the contest keeps of the ladder's games, and the disk it may use (docs/server.md, "Running
for a week"; docs/RULINGS.md 152-153).

*Retention.* Each version's latest ``keep`` ladder games are kept whole (their full record, for the
viewer). An older game, in no version's latest ``keep``, is *reduced to its result*: its row keeps
its seats, places, scores and faults, its ``seats`` rows (each version's place and rating after it)
and its number in ``game_order``; its record goes. That is all the ratings are made of: replaying
the kept results in their order gives the stored ratings exactly (:func:`recompute`). The final's
games (under ``final/``) and the tables' games are never reduced.

*Disk.* SQLite does not give back the room a shrunken row leaves (measured: emptying 3,646 records
of 3,651 freed 179 of 3,170 pages), so a game is reduced by deleting its row and writing its result
again (the emptied pages go to the free list), and pages are given back to the file system by
``PRAGMA incremental_vacuum`` (a contest made by this arena has ``auto_vacuum = INCREMENTAL``; an
older one is converted once, :func:`convert`). The WAL is kept small by checkpoints and
``journal_size_limit``.

*Budget.* With ``arena serve --disk-budget SIZE``, before each block the ladder measures the contest
folder (every file under it: the database, its WAL, the final's files); when it is within
:data:`RESERVE` of the budget (the WAL's room, and a second of games) the ladder reduces what it
may and gives the pages back, and if that is not enough it stops, says so in one line, and plays
again when there is room.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..store import database as store
from ..store.basics import stored_faults, stored_ints
from ..store.migrate import add_indexes
from .rating import START_MU, START_SIGMA, rate

#: Each version's latest ladder games kept whole, unless ``arena serve --keep-games`` says otherwise.
KEEP_GAMES = 100
#: Room kept below the budget for the WAL (the size a checkpoint leaves it at, and what grows until
#: the next one), and for the games stored until the folder is measured again: the folder grows at
#: most :data:`RESERVE` between two looks.
WAL_ROOM = store.WAL_LIMIT + 2**19
BLOCK_ROOM = 2**18
RESERVE = WAL_ROOM + BLOCK_ROOM
#: Pages the ladder's own connection lets the WAL grow to before it checkpoints, with a budget.
WAL_PAGES = 128
#: Seconds between two retention passes, and between two looks at the folder's size.
EVERY_SECONDS = 5.0
SIZE_SECONDS = 1.0
#: Games reduced in one transaction (each is short: the site's writes wait for none).
BATCH = 200
#: Columns of a game emptied when it is reduced to its result (what a game stores beyond it).
EMPTIED: dict[str, Any] = {"log": b""}


def folder_bytes(folder: str | os.PathLike[str]) -> int:
    """The bytes of every regular file under ``folder`` (links not followed)."""
    total = 0
    stack = [os.fspath(folder)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:  # gone meanwhile
                continue
    return total


def database_bytes(folder: str | os.PathLike[str]) -> dict[str, int]:
    """The database's files: ``db``, ``wal`` and ``shm`` bytes (0 when absent)."""
    path = store.db_path(folder)
    sizes = {}
    for part, suffix in (("db", ""), ("wal", "-wal"), ("shm", "-shm")):
        try:
            sizes[part] = os.lstat(f"{path}{suffix}").st_size
        except OSError:
            sizes[part] = 0
    return sizes


def human(size: float) -> str:
    """``size`` bytes in words: 512 B, 3.4 KB, 122 MB, 1.5 GB (powers of 1000, as disks are sold)."""
    for unit in ("B", "KB", "MB", "GB"):
        if abs(size) < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.3g} {unit}"
        size /= 1000
    return f"{size:.3g} TB"  # pragma: no cover - the loop returns at GB


#: Size suffixes ``--disk-budget`` takes (K, M, G, T: powers of 1000; KiB, MiB, GiB, TiB: of 1024).
UNITS = {"": 1, "B": 1, "K": 10**3, "KB": 10**3, "M": 10**6, "MB": 10**6, "G": 10**9, "GB": 10**9}
UNITS |= {"T": 10**12, "TB": 10**12, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def parse_size(text: str) -> int | None:
    """``"50G"``, ``"800MB"``, ``"1.5GiB"``, ``"4000000"`` in bytes; None for anything else."""
    body = text.strip().upper().replace(" ", "")
    digits = len(body) - len(body.lstrip("0123456789."))
    number, unit = body[:digits], body[digits:]
    if unit not in UNITS or not number or number.count(".") > 1 or number in (".",):
        return None
    value = float(number) * UNITS[unit]
    return int(value) if 0 < value < 2**62 else None


def convert(db: sqlite3.Connection) -> bool:
    """Give a database made without ``auto_vacuum = INCREMENTAL`` that mode (a ``VACUUM``: it
    rewrites the file, through the WAL, so it needs about the database's size free for a moment);
    whether it was converted. :raises sqlite3.Error: it could not be (locked, no room)."""
    if int(db.execute("PRAGMA auto_vacuum").fetchone()[0]) == 2:
        return False
    db.execute("PRAGMA auto_vacuum = INCREMENTAL")
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return True


def shrink(db: sqlite3.Connection) -> None:
    """Give the free pages back to the file system, and checkpoint the WAL (the file shrinks when
    the checkpoint copies the commit that shrank it; a reader may hold it back until later)."""
    db.executescript("PRAGMA incremental_vacuum")  # executescript steps it to the end: one page a step else
    db.execute("PRAGMA wal_checkpoint(PASSIVE)")


def reduce_games(db: sqlite3.Connection, keys: list[str]) -> int:
    """Reduce the games ``keys`` to their results, in one transaction; how many were whole. Each row
    is deleted and written again with :data:`EMPTIED` (an emptied row in place would keep its pages);
    its seats rows and its number in ``game_order`` stay as they are; the seats' own output (kept
    with the record, :mod:`arena.server.store.outputs`) goes with the record."""
    if not keys:
        return 0
    marks = ",".join("?" * len(keys))
    with store.writing(db):
        db.execute("PRAGMA defer_foreign_keys = ON")  # its seats point at the key, written again below
        rows = db.execute(f"SELECT * FROM games WHERE key IN ({marks}) AND length(log) > 0", keys).fetchall()
        if not rows:
            return 0
        columns = list(rows[0].keys())
        whole = [r["key"] for r in rows]
        # a seat's own output goes with its record (ruling 145): its author's game page keeps the result
        db.execute(f"DELETE FROM outputs WHERE game IN ({','.join('?' * len(rows))})", whole)
        db.execute(f"DELETE FROM games WHERE key IN ({','.join('?' * len(rows))})", whole)
        db.executemany(
            f"INSERT INTO games ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            [[EMPTIED.get(c, r[c]) for c in columns] for r in rows],
        )
    return len(rows)


class Retention:
    """The ladder worker's keeper of :data:`KEEP_GAMES` and of the disk budget (None: no budget).

    It remembers, for each version, the numbers of its latest ``keep`` games (read once from the
    database, then only the games stored since), so a pass reads only the games kept whole."""

    def __init__(
        self,
        db: sqlite3.Connection,
        folder: str | os.PathLike[str],
        keep: int = KEEP_GAMES,
        budget: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.db, self.folder, self.keep, self.budget, self.clock = db, Path(folder), keep, budget, clock
        self.newest: dict[int, list[int]] = {}
        self.seen = 0
        self.reduced = 0  # games reduced by this worker (for the log)
        self.size = self.needed = 0
        self._passed = self._sized = -1e18
        add_indexes(db)  # the index of whole games (made by `arena serve` too)
        if budget is not None:  # a small WAL, and the room the database holds free given back now
            db.execute(f"PRAGMA wal_autocheckpoint = {WAL_PAGES}")
            db.execute(f"PRAGMA journal_size_limit = {WAL_PAGES * 4096}")
            self.prune()
            shrink(db)

    def _follow(self) -> None:
        rows = self.db.execute(
            "SELECT o.seq, x.submission FROM game_order o JOIN seats x ON x.game = o.key WHERE o.seq > ? "
            "ORDER BY o.seq",
            (self.seen,),
        )
        for seq, sid in rows:
            latest = self.newest.setdefault(int(sid), [])
            latest.append(int(seq))
            if len(latest) > self.keep:
                del latest[0]
            self.seen = int(seq)

    def reducible(self, limit: int = BATCH) -> list[str]:
        """Whole games in no version's latest ``keep`` (at most ``limit``, oldest first)."""
        self._follow()
        seats: dict[str, tuple[int, list[int]]] = {}
        for key, seq, sid in self.db.execute(
            "SELECT g.key, o.seq, x.submission FROM games g JOIN game_order o ON o.key = g.key "
            "LEFT JOIN seats x ON x.game = g.key WHERE length(g.log) > 0"
        ):
            seats.setdefault(str(key), (int(seq), []))[1].extend([] if sid is None else [int(sid)])
        found = []
        for key, (seq, sids) in sorted(seats.items(), key=lambda kv: kv[1][0]):
            if seq > self.seen:  # stored after _follow read the order: looked at next time
                continue
            if all(len(self.newest.get(s, ())) >= self.keep and seq < self.newest[s][0] for s in sids):
                found.append(key)
                if len(found) >= limit:
                    break
        return found

    def prune(self) -> int:
        """Reduce every game out of retention, a batch a transaction; how many."""
        done = 0
        while batch := self.reducible():
            done += reduce_games(self.db, batch)
            if len(batch) < BATCH:
                break
        self.reduced += done
        return done

    def tick(self) -> bool:
        """Between blocks: a retention pass now and then, and the budget kept; False when the
        contest folder has no room for another block (the ladder must wait)."""
        now = self.clock()
        if now - self._passed >= EVERY_SECONDS:
            self._passed = now
            self.prune()
        if self.budget is None:
            return True
        if now - self._sized >= SIZE_SECONDS:
            self._sized = now
            if self.measure() > self.budget:
                self._passed = now
                self.prune()
                shrink(self.db)
                self.measure()
        return self.needed <= self.budget

    def measure(self) -> int:
        """The folder's bytes now (:attr:`size`), and what it may reach before the next look
        (:attr:`needed`): the database file grown to the pages its commits hold (a checkpoint copies
        the WAL's new pages into it while the WAL keeps them), the WAL grown to :data:`WAL_ROOM`, and
        :data:`BLOCK_ROOM` of games."""
        files = database_bytes(self.folder)
        pages = int(self.db.execute("PRAGMA page_count").fetchone()[0])
        logical = pages * int(self.db.execute("PRAGMA page_size").fetchone()[0])
        self.size = folder_bytes(self.folder)
        self.needed = self.size + max(0, logical - files["db"]) + max(0, WAL_ROOM - files["wal"]) + BLOCK_ROOM
        return self.needed


def result(db: sqlite3.Connection, key: str) -> dict[str, Any] | None:
    """A game reduced to its result, as its page shows it: each seat's version, place and score,
    and its faults' kinds; None when there is no such game or it is kept whole."""
    row = db.execute("SELECT key, scores, faults, finished FROM games WHERE key = ? AND length(log) = 0", (key,))
    game = row.fetchone()
    if game is None:
        return None
    scores = stored_ints(game["scores"])
    seats = []
    for r in db.execute(
        "SELECT x.seat, x.place, s.bot, s.version FROM seats x LEFT JOIN submissions s ON s.id = x.submission "
        "WHERE x.game = ? ORDER BY x.seat",
        (key,),
    ):
        seat = int(r["seat"])
        seats.append(
            {
                "seat": seat,
                "bot": str(r["bot"] or "?"),
                "version": r["version"],
                "place": r["place"],
                "score": scores[seat] if 0 <= seat < len(scores) else None,
            }
        )
    faults = [{"seat": f[0], "kind": f[1], "round": f[3]} for f in stored_faults(game["faults"])]
    return {"key": str(game["key"]), "seats": seats, "faults": faults, "finished": game["finished"]}


def counts(db: sqlite3.Connection) -> dict[str, int]:
    """Ladder games kept whole and reduced to their results."""
    total = int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    whole = int(db.execute("SELECT COUNT(*) FROM games WHERE length(log) > 0").fetchone()[0])
    return {"games": total, "whole": whole, "reduced": total - whole}


def recompute(db: sqlite3.Connection) -> dict[tuple[int, int], tuple[float, float, int]]:
    """Every version's rating in every round, recomputed from the kept results alone: each
    version rated in a round starts there from a new rating, and the games are rated again one at a
    time in the order they were stored (``game_order``), as
    :func:`arena.server.store.database.record_game` rated them. ``(round, submission) -> (mu,
    sigma, games)``."""
    ratings: dict[tuple[int, int], tuple[float, float, int]] = {
        (int(r), int(s)): (START_MU, START_SIGMA, 0) for r, s in db.execute("SELECT round, submission FROM ratings")
    }
    games = db.execute(
        "SELECT b.round, x.game, x.seat, x.submission, x.place FROM game_order o JOIN games g ON g.key = o.key "
        "JOIN blocks b ON b.id = g.block JOIN seats x ON x.game = g.key ORDER BY o.seq, x.seat"
    )
    current: tuple[int, str] | None = None
    seats: list[tuple[int, int]] = []

    def rate_game() -> None:
        if current is None:
            return
        rnd = current[0]
        rated = [(sid, place) for sid, place in seats if (rnd, sid) in ratings]
        after = rate([ratings[(rnd, sid)][:2] for sid, _ in rated], [place for _, place in rated])
        for (sid, _), (mu, sigma) in zip(rated, after, strict=True):
            ratings[(rnd, sid)] = (mu, sigma, ratings[(rnd, sid)][2] + 1)

    for rnd, game, _seat, sid, place in games:
        if current != (int(rnd), str(game)):
            rate_game()
            current, seats = (int(rnd), str(game)), []
        seats.append((int(sid), int(place)))
    rate_game()
    return ratings
