"""Re-playing tournament games from the database: the record of any game, kept or not.

A game follows from its key, the tournament's settings and schedule and the
bots' sources, all stored in the database. :func:`load_plan` rebuilds the
tournament's :class:`~arena.tournament.runner.Plan` from them, and games are
played by the same :class:`~arena.tournament.worker.GameRunner` (or backend)
the tournament used, so the same seeds and seating come out. Each re-played
game is checked against the stored result (:func:`differences`): a game that
comes out otherwise (a bot that depends on time, say) is reported, not hidden.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..loader import BotSource
from ..rules import Rules
from .db import TournamentDBError, read_bots, read_sources
from .runner import Entrant, Plan
from .schedule import GameKey, Schedule, SizeSchedule
from .worker import GameRecord, GameRunner


class ReplayError(Exception):
    """A game cannot be re-played (no such game, sources not stored...)."""


@dataclass(frozen=True)
class StoredGame:
    """A game's result as the database holds it."""

    key: GameKey
    seed: int
    seating: tuple[int, ...]
    places: tuple[int, ...]
    scores: tuple[int, ...]
    rounds: int
    moves: int


def load_plan(conn: sqlite3.Connection, meta: dict[str, str]) -> Plan:
    """The tournament's plan, rebuilt from the database (bots from their stored sources).

    :raises ReplayError: the database does not hold the bots' sources.
    """
    try:
        settings = json.loads(meta.get("settings", "{}"))
    except ValueError:
        raise TournamentDBError("damaged settings in table meta") from None
    sources = read_sources(conn)
    bots = read_bots(conn)
    missing = [b.label for b in bots if b.sha256 not in sources]
    if missing:
        raise ReplayError(
            f"the database does not hold the source of {', '.join(missing)} (it was made by an "
            "arena that did not store sources); only games kept with --replays can be shown"
        )
    trusted = bool(settings.get("trusted", False))
    people = []
    for b in bots:
        src = BotSource(b.name, sources[b.sha256], b.path, "", b.origin)
        people.append(Entrant(src, b.label, trusted or src.origin == "registry"))
    tables: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
    for size, tbl, members in conn.execute("SELECT size, tbl, bots FROM tables ORDER BY size, tbl"):
        tables.setdefault(size, []).append((tbl, tuple(json.loads(members))))
    kinds = settings.get("schedule", {})
    sizes = tuple(
        SizeSchedule(size, str(kinds.get(str(size), "round-robin")), tuple(t for _, t in sorted(rows)))
        for size, rows in sorted(tables.items())
    )
    schedule = Schedule(len(bots), int(settings["seed"]), int(settings["games"]), sizes)
    return Plan(tuple(people), Rules.from_dict(settings["rules"]), schedule, trusted)


def stored_games(conn: sqlite3.Connection, key: GameKey | None = None) -> list[StoredGame]:
    """Stored results (of one game, or all in key order)."""
    where, args = ("WHERE size = ? AND tbl = ? AND deal = ? AND rotation = ?", tuple(key)) if key else ("", ())
    games = {
        gid: (GameKey(size, tbl, deal, rot), seed, rounds, moves)
        for gid, size, tbl, deal, rot, seed, rounds, moves in conn.execute(
            f"SELECT id, size, tbl, deal, rotation, seed, rounds, moves FROM games {where}", args
        )
    }
    seats: dict[int, list[tuple[int, int, int]]] = {gid: [] for gid in games}
    for gid, bot, place, score in conn.execute("SELECT game_id, bot, place, score FROM results ORDER BY game_id, seat"):
        if gid in seats:
            seats[gid].append((bot, place, score))
    out = [
        StoredGame(
            k,
            seed,
            tuple(b for b, _, _ in seats[gid]),
            tuple(p for _, p, _ in seats[gid]),
            tuple(s for _, _, s in seats[gid]),
            rounds,
            moves,
        )
        for gid, (k, seed, rounds, moves) in games.items()
    ]
    return sorted(out, key=lambda g: g.key)


def differences(stored: StoredGame, record: GameRecord) -> list[str]:
    """How a re-played game differs from its stored result (empty when it is the same game)."""
    out = []
    for what, a, b in (
        ("seed", stored.seed, record.seed),
        ("seating", stored.seating, tuple(record.seating)),
        ("places", stored.places, tuple(record.places)),
        ("scores", stored.scores, tuple(record.scores)),
        ("rounds", stored.rounds, record.rounds),
        ("moves", stored.moves, record.moves),
    ):
        if a != b:
            out.append(
                f"{what} {list(a) if isinstance(a, tuple) else a} stored, "
                f"{list(b) if isinstance(b, tuple) else b} re-played"
            )
    return out


def in_schedule(schedule: Schedule, key: GameKey) -> bool:
    """Whether ``key`` names a game of ``schedule``."""
    sizes = [s for s in schedule.sizes if s.size == key.size]
    return (
        bool(sizes)
        and 0 <= key.table < len(sizes[0].tables)
        and 0 <= key.deal < schedule.deals
        and 0 <= key.rotation < key.size
    )


def parse_key(text: str, plan: Plan) -> GameKey:
    """:raises ReplayError: not a key, or not a game of this tournament."""
    try:
        key = GameKey.parse(text)
    except ValueError as exc:
        raise ReplayError(str(exc)) from None
    if not in_schedule(plan.schedule, key):
        raise ReplayError(f"{text}: no such game in this tournament's schedule")
    return key


def replay_one(conn: sqlite3.Connection, meta: dict[str, str], text: str) -> tuple[GameRecord, list[str]]:
    """Re-play the game named ``text``: (its record with the log, differences from the stored result).

    :raises ReplayError: a bad key, a game not played yet, or sources not stored.
    """
    plan = load_plan(conn, meta)
    key = parse_key(text, plan)
    stored = stored_games(conn, key)
    if not stored:
        raise ReplayError(f"{key}: this game has not been played yet (it is not in the database)")
    runner = GameRunner(plan.job(keep_logs=True))
    try:
        record = runner.play(key)
    finally:
        runner.close()
    return record, differences(stored[0], record)


def replay_many(
    plan: Plan, keys: Sequence[GameKey], *, workers: int = 1, stop: Callable[[], bool] = lambda: False
) -> Iterator[GameRecord]:
    """Re-play ``keys`` on the tournament's own local backend, in the order they finish."""
    from .runner import local_backend

    batches = local_backend(workers)(plan.job(keep_logs=True), keys, stop)
    try:
        for batch in batches:
            yield from batch
    finally:
        batches.close()


def open_db(path: str) -> tuple[sqlite3.Connection, dict[str, str]]:
    """The database for reading. :raises TournamentDBError:."""
    from .db import open_readonly

    if not Path(path).exists():
        raise TournamentDBError(f"{path}: no such file")
    return open_readonly(path)
