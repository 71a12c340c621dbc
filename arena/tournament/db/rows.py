"""Rows of a tournament database, type-checked on the way in: the one place that reads them.

A database handed to the organiser is hostile input, like a bot file: anyone
can write an SQLite file by hand. Every value read here is checked for its
type, its range, its JSON shape and its references (a game's table exists, a
seat list is a permutation of that table's bots, a fault names the bot of its
seat...) before any caller sees it, so a row of the wrong shape stops the
command with one line, ``damaged tournament database: table T: ...``
(:class:`DamagedDB`), never a traceback, a loop over a count the row made up,
or text that reaches a page, a terminal or the sandbox unchecked. Row counts
and bytes are bounded as rows are fetched, and every stored source is checked
against its sha256 (:func:`bot_sources`) before any of it can run. What SQLite does
around the rows (schema, side files, work, signals) is :mod:`.guard`'s.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...game.rules import Rules
from ...trust.botsource import MAX_SOURCE_BYTES, source_bytes
from ...trust.text import escape
from ..plan.schedule import MAX_DEALS, MAX_GAMES, MAX_SIZE, MAX_TABLES, MIN_SIZE, GameKey
from ..results.finished import GameResult, SeatResult
from ..results.teams import read_teams
from .guard import DamagedDB as DamagedDB
from .guard import SourceMismatch as SourceMismatch
from .guard import TournamentDBError as TournamentDBError
from .guard import damaged as damaged
from .guard import read_rows, show

#: The rows of a read, bounded in rows, bytes and work (:func:`.guard.read_rows`).
fetch = read_rows


@dataclass(frozen=True)
class BotRow:
    bot: int
    label: str
    name: str
    path: str | None
    origin: str
    sha256: str


#: Bounds of what a database can hold: beyond them a row is damaged, whatever it says.
MAX_BOTS = 10_000  # standings compare every pair: beyond this a reader would not finish
MAX_TEXT = 1 << 20  # characters of a meta value (settings, authors)
MAX_META = 1000  # rows of meta
MAX_LABEL = 80  # a label: a cleaned name (40) with "#N" or " (file)"
MAX_PATH = 4096
MAX_DETAIL = 1000  # characters of a fault's detail (records clip it to 200 bytes of JSON)
MAX_COUNT = 2**31 - 1  # faults or moves of one seat
MAX_SCORE = 2**53  # a score's magnitude (exact in JSON readers)
MAX_SEED_BITS = 1024
DEAL_CAP = 1_000_000  # deals per table of an adaptive tournament (adaptive.DEAL_CAP)
KINDS = ("round-robin", "balanced", "gauntlet")
SETTINGS = {
    "seed",
    "sizes",
    "games",
    "schedule",
    "rules",
    "trusted",
    "move_seconds",
    "game_seconds",
    "adaptive",
    "teams",
}
#: Settings stored under another name by databases made before the rename (old name -> name).
RENAMED_SETTINGS = {"move_time": "move_seconds", "game_time": "game_seconds"}
#: The sequential methods an adaptive tournament's design may name (:mod:`arena.tournament.plan.adaptive` uses them):
#: mixture betting with Holm's step-down (new tournaments), and the online-Newton sign test with
#: Bonferroni of databases made before it.
METHOD = "betting-mixture/holm"
LEGACY_METHOD = "betting-sign-test/ons/bonferroni"
METHODS = (METHOD, LEGACY_METHOD)
ADAPTIVE = {"method", "confidence", "top", "gauntlet", "first_deals", "round_blocks"}
FAULT_KINDS = ("exception", "illegal-finish", "timeout", "crash", "memory", "retired")
_SHA = re.compile(r"[0-9a-f]{64}\Z")


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def whole(table: str, what: str, value: object, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise damaged(table, f"{what} {show(value)} is not a whole number from {lo} to {hi}")
    return value


def flag(table: str, what: str, value: object) -> bool:
    if type(value) is not int or value not in (0, 1):
        raise damaged(table, f"{what} {show(value)} is not 0 or 1")
    return bool(value)


def number(table: str, what: str, value: object, lo: float, hi: float) -> float:
    """A finite int or float in [lo, hi] (NaN and infinities are damage)."""
    if not (type(value) is int or type(value) is float) or not math.isfinite(value) or not lo <= value <= hi:
        raise damaged(table, f"{what} {show(value)} is not a number from {lo:g} to {hi:g}")
    return float(value)


def text(table: str, what: str, value: object, limit: int, *, printable: bool = True) -> str:
    """A str of 1 to ``limit`` characters (``printable``: no control, bidi or line-breaking
    character, nothing a terminal or a page could take for markup of its own)."""
    if type(value) is not str or not 0 < len(value) <= limit or (printable and not value.isprintable()):
        kind = "printable " if printable else ""
        raise damaged(table, f"{what} {show(value)} is not {kind}text of 1 to {limit} characters")
    return value


def parse_json(table: str, what: str, value: object, limit: int = MAX_TEXT) -> Any:
    if type(value) is not str or len(value) > limit:
        raise damaged(table, f"{what} is not JSON text of at most {limit} characters")
    try:
        return json.loads(value)
    except (ValueError, RecursionError):  # bad JSON, a number past Python's digit limit, deep nesting
        raise damaged(table, f"{what} is not valid JSON") from None


# -- meta ---------------------------------------------------------------------


def check_meta(rows: list[Any]) -> dict[str, str]:
    """The ``meta`` table's rows as a dict of text. :raises DamagedDB:."""
    meta: dict[str, str] = {}
    for key, value in rows:
        key = text("meta", "a key", key, 100)
        if key in meta:
            raise damaged("meta", f"key {show(key)} twice")
        if type(value) is not str or len(value) > MAX_TEXT:
            raise damaged("meta", f"{key} {show(value)} is not text of at most {MAX_TEXT} characters")
        meta[key] = value
    return meta


def read_settings(meta: dict[str, str]) -> dict[str, Any]:
    """The tournament's settings (``meta.settings``), every key a run reads checked; keys this
    arena does not know are dropped (nothing unchecked is shown or obeyed).

    :raises DamagedDB:.
    """
    if "settings" not in meta:
        raise damaged("meta", "no settings")
    s = parse_json("meta", "settings", meta["settings"])
    if type(s) is not dict:
        raise damaged("meta", "settings are not a JSON object")
    s = renamed_settings(s)
    s = {k: v for k, v in s.items() if k in SETTINGS}
    seed = s.get("seed")
    if type(seed) is not int or seed.bit_length() > MAX_SEED_BITS:
        raise damaged("meta", f"settings: seed {show(seed)} is not a whole number of at most {MAX_SEED_BITS} bits")
    sizes = s.get("sizes")
    if (
        type(sizes) is not list
        or not sizes
        or any(type(k) is not int or not MIN_SIZE <= k <= MAX_SIZE for k in sizes)
        or sizes != sorted(set(sizes))
    ):
        raise damaged("meta", f"settings: sizes {show(sizes)} are not distinct table sizes from 2 to 6, in order")
    whole("meta", "settings: games", s.get("games"), 1, MAX_DEALS)
    rules = s.get("rules")
    if type(rules) is not dict or ("points" in rules and type(rules["points"]) is not dict):
        raise damaged("meta", "settings: rules are not a JSON object of rule settings")
    if "name" in rules:
        text("meta", "settings: the rules' name", rules["name"], 40)
    try:
        s["rules"] = Rules.from_dict(rules).to_dict()
    except ValueError as exc:
        raise damaged("meta", f"settings: rules: {escape(exc, 200)}") from None
    schedule = s.get("schedule", {})
    if type(schedule) is not dict or any(
        k not in [str(x) for x in sizes] or v not in KINDS for k, v in schedule.items()
    ):
        raise damaged("meta", f"settings: schedule {show(schedule)} is not a kind of schedule per table size")
    if type(s.get("trusted", False)) is not bool:
        raise damaged("meta", "settings: trusted is not true or false")
    for key in ("move_seconds", "game_seconds"):
        if key in s:
            number("meta", f"settings: {key}", s[key], 1e-9, 86400)
    if s.get("move_seconds", 1.0) > s.get("game_seconds", 30.0):
        raise damaged("meta", "settings: move_seconds is more than game_seconds")
    if "adaptive" in s:
        _check_adaptive(s["adaptive"], sizes)
    if "teams" in s:
        read_teams(s["teams"])
        if (
            not s["rules"]["teams"]
            or any(k not in (4, 6) for k in sizes)
            or "adaptive" in s
            or "gauntlet" in schedule.values()
        ):
            raise damaged(
                "meta", "settings: teams, but not a fixed schedule of tables of 4 or 6 under the teams variant"
            )
    return s


def renamed_settings(s: dict[str, Any]) -> dict[str, Any]:
    """``s`` with the keys of :data:`RENAMED_SETTINGS` under their names (a database made before
    the rename still opens and resumes). :raises DamagedDB: both names given."""
    out = dict(s)
    for old, new in RENAMED_SETTINGS.items():
        if old in out:
            if new in out:
                raise damaged("meta", f"settings: both {old} and {new} (one setting under two names)")
            out[new] = out.pop(old)
    return out


def _check_adaptive(a: object, sizes: list[int]) -> None:
    if type(a) is not dict or not sizes:
        raise damaged("meta", "settings: adaptive is not a JSON object of a design")
    if a.get("method", METHODS[-1]) not in METHODS:
        raise damaged("meta", f"settings: adaptive method {show(a.get('method'))} is not one this arena knows")
    number("meta", "settings: adaptive confidence", a.get("confidence"), 1e-9, 1 - 1e-9)
    whole("meta", "settings: adaptive first_deals", a.get("first_deals"), 1, MAX_DEALS)
    if a.get("top") is not None:
        whole("meta", "settings: adaptive top", a.get("top"), 1, MAX_BOTS)
    if type(a.get("gauntlet", False)) is not bool:
        raise damaged("meta", "settings: adaptive gauntlet is not true or false")
    if "round_blocks" in a:
        whole("meta", "settings: adaptive round_blocks", a["round_blocks"], 1, MAX_GAMES)
    for key in set(a) - ADAPTIVE:
        del a[key]


def read_authors(meta: dict[str, str], labels: Sequence[str] | None = None) -> dict[str, str]:
    """Bot label -> author (from submission manifests); {} for databases made without any.

    :raises DamagedDB: not a JSON object of printable names, or naming a bot not in the database.
    """
    if "authors" not in meta:
        return {}
    data = parse_json("meta", "authors", meta["authors"])
    if type(data) is not dict:
        raise damaged("meta", "authors are not a JSON object")
    for label, author in data.items():
        if labels is not None and label not in labels:
            raise damaged("meta", f"authors: {show(label)} is not a bot of this tournament")
        text("meta", f"the author of {escape(label, 40)}", author, 200)
    return dict(data)


# -- bots, tables, games ------------------------------------------------------


def read_bots(conn: sqlite3.Connection) -> list[BotRow]:
    """The entrants, numbered from 0 in order. :raises DamagedDB:."""
    rows = fetch(conn, "bots", "SELECT bot, label, name, path, origin, sha256 FROM bots ORDER BY bot", limit=MAX_BOTS)
    if len(rows) < 2:
        raise damaged("bots", f"{len(rows)} bots; a tournament has at least 2")
    out: list[BotRow] = []
    labels: set[str] = set()
    for i, (bot, label, name, path, origin, sha) in enumerate(rows):
        if type(bot) is not int or bot != i:
            raise damaged("bots", f"bot number {show(bot)} where {i} belongs (bots are numbered from 0)")
        label = text("bots", f"bot {i}'s label", label, MAX_LABEL)
        if label in labels:
            raise damaged("bots", f"label {show(label)} twice")
        labels.add(label)
        name = text("bots", f"bot {i}'s name", name, MAX_LABEL)
        if origin not in ("file", "registry"):
            raise damaged("bots", f"bot {i}'s origin {show(origin)} is not 'file' or 'registry'")
        if path is not None:
            path = text("bots", f"bot {i}'s path", path, MAX_PATH, printable=False)
            if origin == "registry":
                raise damaged("bots", f"bot {i} is registered but has a path")
        if type(sha) is not str or not _SHA.match(sha):
            raise damaged("bots", f"bot {i}'s sha256 {show(sha)} is not 64 hex digits")
        out.append(BotRow(i, label, name, path, origin, sha))
    return out


Tables = dict[int, tuple[tuple[int, ...], ...]]


def read_tables(conn: sqlite3.Connection, bots: int) -> Tables:
    """Per table size, its tables (bot numbers), numbered from 0. :raises DamagedDB:."""
    rows = fetch(conn, "tables", "SELECT size, tbl, bots FROM tables ORDER BY size, tbl", limit=MAX_SIZE * MAX_TABLES)
    out: dict[int, list[tuple[int, ...]]] = {}
    for size, tbl, members in rows:
        size = whole("tables", "size", size, MIN_SIZE, min(MAX_SIZE, bots))
        have = out.setdefault(size, [])
        if type(tbl) is not int or tbl != len(have):
            raise damaged("tables", f"table {show(tbl)} of size {size} where {len(have)} belongs")
        seats = parse_json("tables", f"table {size}/{tbl}'s bots", members, 200)
        if (
            type(seats) is not list
            or len(seats) != size
            or any(type(b) is not int or not 0 <= b < bots for b in seats)
            or len(set(seats)) != size
        ):
            raise damaged("tables", f"table {size}/{tbl}'s bots {show(members)} are not {size} distinct bots")
        have.append(tuple(seats))
    if any(len(t) > MAX_TABLES for t in out.values()):
        raise damaged("tables", f"more than {MAX_TABLES} tables of one size")
    return {k: tuple(v) for k, v in out.items()}


def read_game_data(
    conn: sqlite3.Connection, bots: int, tables: Tables, settings: dict[str, Any] | None = None
) -> list[GameResult]:
    """Every finished game, checked against the bots, the tables and (when given) the settings;
    in key order (size, table, deal, rotation): the order ratings use. :raises DamagedDB:."""
    rules = settings["rules"] if settings else None
    deals = DEAL_CAP if not settings or "adaptive" in settings else settings["games"]
    max_rounds = rules["max_rounds"] if rules else MAX_COUNT
    max_moves = rules["max_rounds"] * rules["max_moves"] if rules else MAX_COUNT
    games: dict[int, tuple[GameKey, int, int, int]] = {}
    keys: set[GameKey] = set()
    sql = "SELECT id, size, tbl, deal, rotation, seed, rounds, moves FROM games"
    for gid, size, tbl, deal, rot, seed, rounds, moves in fetch(conn, "games", sql, limit=MAX_GAMES):
        gid = whole("games", "id", gid, 1, 2**63 - 1)
        if gid in games:
            raise damaged("games", f"id {gid} twice")
        where = f"game id {gid}"
        if type(size) is not int or size not in tables:
            raise damaged("games", f"{where}: size {show(size)} has no tables")
        tbl = whole("games", f"{where}: table", tbl, 0, len(tables[size]) - 1)
        key = GameKey(
            size,
            tbl,
            whole("games", f"{where}: deal", deal, 0, deals - 1),
            whole("games", "rotation", rot, 0, size - 1),
        )
        if key in keys:
            raise damaged("games", f"game {key} twice")
        keys.add(key)
        seed = whole("games", f"{where}: seed", seed, 0, 2**63 - 1)
        rounds = whole("games", f"{where}: rounds", rounds, 0, max_rounds)
        games[gid] = (key, seed, rounds, whole("games", f"{where}: moves", moves, 0, max_moves))
    seats: dict[int, list[SeatResult]] = {gid: [] for gid in games}
    sql = "SELECT game_id, seat, bot, place, score, loser, faults, retired FROM results ORDER BY game_id, seat"
    for gid, seat, bot, place, score, loser, faults, retired in fetch(conn, "results", sql, limit=MAX_SIZE * MAX_GAMES):
        if type(gid) is not int or gid not in games:
            raise damaged("results", f"a result of game id {show(gid)}, which is not in table games")
        key = games[gid][0]
        got = seats[gid]
        if type(seat) is not int or seat != len(got) or seat >= key.size:
            raise damaged("results", f"game {key}: seat {show(seat)} where seat {len(got)} belongs")
        row = (bot, place, score, loser, faults, retired)
        if not (  # the common case in one test; the slow road below names what is wrong
            type(bot) is int
            and type(place) is int
            and type(score) is int
            and type(faults) is int
            and 0 <= bot < bots
            and 1 <= place <= key.size
            and -MAX_SCORE <= score <= MAX_SCORE
            and loser in (0, 1)
            and type(loser) is int
            and 0 <= faults <= MAX_COUNT
            and retired in (0, 1)
            and type(retired) is int
        ):
            where = f"game {key} seat {seat}:"
            row = (
                whole("results", f"{where} bot", bot, 0, bots - 1),
                whole("results", f"{where} place", place, 1, key.size),
                whole("results", f"{where} score", score, -MAX_SCORE, MAX_SCORE),
                flag("results", f"{where} loser", loser),
                whole("results", f"{where} faults", faults, 0, MAX_COUNT),
                flag("results", f"{where} retired", retired),
            )
        got.append(SeatResult(row[0], row[1], row[2], bool(row[3]), row[4], bool(row[5])))
    out = []
    for gid, (key, seed, rounds, moves) in games.items():
        got = seats[gid]
        if len(got) != key.size:
            raise damaged("results", f"game {key} has {len(got)} seats, not {key.size}")
        if sorted(s[0] for s in got) != sorted(tables[key.size][key.table]):
            raise damaged("results", f"game {key}: its seats are not the bots of its table")
        out.append(GameResult(key, tuple(got), seed, rounds, moves, gid))
    return sorted(out, key=lambda g: g.key)


def read_faults(
    conn: sqlite3.Connection, games: Sequence[GameResult]
) -> list[tuple[GameResult, int, int, int, str, str]]:
    """Every stored fault: (game, seat, bot, round, kind, detail), in stored order. :raises DamagedDB:."""
    by_id = {g.id: g for g in games}
    sql = "SELECT game_id, seat, bot, round, kind, detail FROM faults ORDER BY game_id, rowid"
    out = []
    for gid, seat, bot, rnd, kind, detail in fetch(conn, "faults", sql, limit=3 * MAX_SIZE * MAX_GAMES):
        if type(gid) is not int or gid not in by_id:
            raise damaged("faults", f"a fault of game id {show(gid)}, which is not in table games")
        g = by_id[gid]
        seat = whole("faults", f"game {g.key}: seat", seat, 0, g.key.size - 1)
        if type(bot) is not int or bot != g.seats[seat][0]:
            raise damaged("faults", f"game {g.key}: bot {show(bot)} is not the bot of seat {seat}")
        rnd = whole("faults", f"game {g.key}: round", rnd, 0, g.rounds + 1)
        if kind not in FAULT_KINDS:
            raise damaged("faults", f"game {g.key}: kind {show(kind)} is not a fault kind")
        if type(detail) is not str or len(detail) > MAX_DETAIL:
            raise damaged("faults", f"game {g.key}: detail is not text of at most {MAX_DETAIL} characters")
        out.append((g, seat, bot, rnd, kind, detail))
    return out


def read_seat_times(
    conn: sqlite3.Connection, games: Sequence[GameResult]
) -> dict[tuple[int, int], tuple[int, float, float]]:
    """(game id, seat) -> (moves, seconds, worst move's seconds); {} for databases made before
    times were stored. :raises DamagedDB:."""
    if not has_table(conn, "seat_times"):
        return {}
    by_id = {g.id: g for g in games}
    out: dict[tuple[int, int], tuple[int, float, float]] = {}
    sql = "SELECT game_id, seat, moves, seconds, worst FROM seat_times"
    for gid, seat, moves, seconds, worst in fetch(conn, "seat_times", sql, limit=MAX_SIZE * MAX_GAMES):
        if type(gid) is not int or gid not in by_id:
            raise damaged("seat_times", f"a time of game id {show(gid)}, which is not in table games")
        g = by_id[gid]
        seat = whole("seat_times", f"game {g.key}: seat", seat, 0, g.key.size - 1)
        if (gid, seat) in out:
            raise damaged("seat_times", f"game {g.key}: seat {seat} twice")
        out[(gid, seat)] = (
            whole("seat_times", f"game {g.key}: moves", moves, 0, MAX_COUNT),
            number("seat_times", f"game {g.key}: seconds", seconds, 0, 1e9),
            number("seat_times", f"game {g.key}: worst", worst, 0, 1e9),
        )
    return out


# -- sources ------------------------------------------------------------------


def bot_sources(conn: sqlite3.Connection, bots: Sequence[BotRow]) -> dict[str, str]:
    """The stored sources of ``bots`` by sha256, each checked to hash to it (as the loader holds
    them: undecodable bytes as surrogate escapes); bots whose source is not stored are left out.

    :raises SourceMismatch: a stored source that is not what its sha256 says (naming the bot).
    :raises DamagedDB: a source row of the wrong type or size, or stored twice.
    """
    if not has_table(conn, "sources"):
        return {}
    out: dict[str, str] = {}
    for b in bots:
        if b.sha256 in out:
            continue
        sql = "SELECT source FROM sources WHERE sha256 = ? AND length(CAST(source AS BLOB)) <= ?"
        rows = fetch(conn, "sources", sql, (b.sha256, MAX_SOURCE_BYTES + 1), limit=MAX_GAMES)
        (count,) = conn.execute("SELECT COUNT(*) FROM sources WHERE sha256 = ?", (b.sha256,)).fetchone()
        if count > 1:
            raise damaged("sources", f"two sources for {b.sha256[:12]}")
        if count and not rows:
            raise damaged("sources", f"the source of {escape(b.label)} is over {MAX_SOURCE_BYTES} bytes")
        if not rows:
            continue
        (data,) = rows[0]
        if type(data) not in (str, bytes):
            raise damaged("sources", f"the source of {escape(b.label)} is {show(data)}, not text")
        raw = data.encode() if isinstance(data, str) else data
        if hashlib.sha256(raw).hexdigest() != b.sha256:
            raise SourceMismatch(
                f"the database's source of {escape(b.label)} does not match its sha256: refusing to run it"
            )
        for errors in ("surrogateescape", "surrogatepass"):
            decoded = raw.decode("utf-8", errors)
            if source_bytes(decoded) == raw:
                out[b.sha256] = decoded
                break
        else:
            raise damaged("sources", f"the source of {escape(b.label)} cannot be held as text")
    return out
