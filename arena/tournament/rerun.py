"""Re-playing tournament games from the database: the record of any game, kept or not.

A game follows from its key, the tournament's settings and schedule and the
bots' sources, all stored in the database. :func:`load_plan` rebuilds the
tournament's :class:`~arena.tournament.plan.plan.Plan` from them, and games are
played by the same :class:`~arena.tournament.backends.games.GameRunner` (or backend)
the tournament used, so the same seeds and seating come out. Each re-played
game is checked against the stored result (:func:`differences`): a game that
comes out otherwise (a bot that depends on time, say) is reported, not hidden.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ..game.rules import Rules
from ..trust.botsource import BotSource, source_bytes
from .backends.games import GameRecord, GameRunner
from .db.database import LEGACY_SETTINGS, TournamentDBError
from .db.read import Stored, load
from .db.rows import BotRow, bot_sources
from .plan.plan import Entrant, Plan
from .plan.schedule import GameKey, Schedule, SizeSchedule
from .results.finished import GameResult, differences


class RerunError(Exception):
    """A game cannot be re-played (no such game, sources not stored...)."""


def registered_source(name: str) -> BotSource | None:
    """The bot the installed registry provides under ``name`` today (None: no such bot)."""
    from ..errors import BotLoadError
    from ..seats.loader import registry
    from ..trust.botsource import read_bot_file

    path = registry().get(name)
    if path is None:
        return None
    try:
        return read_bot_file(path, origin="registry", name=name)
    except BotLoadError:
        return None


def entrant_of(bot: BotRow, source: str, *, trusted: bool) -> Entrant:
    """A stored bot as an entrant. It counts as the registry's own bot (run in-process, as the
    tournament ran it) only when the installed registry provides exactly these bytes under its
    name today; any other stored code is a bot file, sandboxed unless ``trusted`` (given on the
    command line, never read from the database). No stored path is kept: none is ever opened."""
    if bot.origin == "registry":
        installed = registered_source(bot.name)
        if installed is not None and source_bytes(installed.source) == source_bytes(source):
            return Entrant(installed, bot.label, True)
    from ..trust.botsource import stored_source

    return Entrant(stored_source(bot.name, source), bot.label, trusted)


def load_plan(conn: sqlite3.Connection, meta: dict[str, str], *, trusted: bool = False) -> Plan:
    """The tournament's plan, rebuilt from the database (bots from their stored sources, each
    checked against its sha256 first). ``trusted`` (the command line's ``--trusted``) runs every
    bot in-process; the database's own ``trusted`` setting is never obeyed.

    :raises RerunError: the database does not hold the bots' sources.
    :raises TournamentDBError: a damaged database, or a source that does not match its sha256.
    """
    stored = load(conn, meta)
    return plan_of(conn, stored, trusted=trusted)


def plan_of(conn: sqlite3.Connection, stored: Stored, *, trusted: bool = False) -> Plan:
    """:func:`load_plan` for a database already read by :func:`~.db.read.load`."""
    settings = stored.settings
    sources = bot_sources(conn, stored.bots)
    missing = [b.label for b in stored.bots if b.sha256 not in sources]
    if missing:
        raise RerunError(
            f"the database does not hold the source of {', '.join(missing)} (it was made by an "
            "arena that did not store sources); only games kept with --replays can be shown"
        )
    people = tuple(entrant_of(b, sources[b.sha256], trusted=trusted) for b in stored.bots)
    kinds = settings.get("schedule", {})
    sizes = tuple(
        SizeSchedule(size, str(kinds.get(str(size), "round-robin")), tables)
        for size, tables in sorted(stored.tables.items())
    )
    teams = stored.teams
    schedule = Schedule(len(stored.bots), settings["seed"], settings["games"], sizes, tuple(t.members for t in teams))
    move, game = (float(settings.get(k, LEGACY_SETTINGS[k])) for k in ("move_seconds", "game_seconds"))
    rules = Rules.from_dict(settings["rules"])
    return Plan(people, rules, schedule, trusted, move_seconds=move, game_seconds=game, teams=teams)


def stored_games(stored: Stored, key: GameKey | None = None) -> list[GameResult]:
    """Stored results (of one game, or all in key order)."""
    return [g for g in stored.games if key is None or g.key == key]


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
    """:raises RerunError: not a key, or not a game of this tournament."""
    try:
        key = GameKey.parse(text)
    except ValueError as exc:
        raise RerunError(str(exc)) from None
    if not in_schedule(plan.schedule, key):
        raise RerunError(f"{text}: no such game in this tournament's schedule")
    return key


def rerun_one(
    conn: sqlite3.Connection,
    meta: dict[str, str],
    text: str,
    *,
    trusted: bool = False,
    approve: Callable[[Plan], None] = lambda plan: None,
) -> tuple[GameRecord, list[str]]:
    """Re-play the game named ``text``: (its record with the log, differences from the stored result).
    ``approve(plan)`` is called before anything runs (the command's sandbox check: it may raise).

    :raises RerunError: a bad key, a game not played yet, or sources not stored.
    :raises TournamentDBError: a damaged database, or a source that does not match its sha256.
    """
    everything = load(conn, meta)
    plan = plan_of(conn, everything, trusted=trusted)
    key = parse_key(text, plan)
    stored = stored_games(everything, key)
    if not stored:
        raise RerunError(f"{key}: this game has not been played yet (it is not in the database)")
    approve(plan)
    runner = GameRunner(plan.job(keep_logs=True))
    try:
        record = runner.play(key)
    finally:
        runner.close()
    return record, differences(stored[0], record.result())


def rerun_many(
    plan: Plan, keys: Sequence[GameKey], *, workers: int = 1, stop: Callable[[], bool] = lambda: False
) -> Iterator[GameRecord]:
    """Re-play ``keys`` on the tournament's own local backend, in the order they finish (each bot
    program's build once, here: :func:`.builds.prebuild`)."""
    from .builds import prebuild
    from .runner import local_backend

    if workers > 1:
        plan = prebuild(plan)
    batches = local_backend(workers)(plan.job(keep_logs=True), keys, stop)
    try:
        for batch in batches:
            yield from batch
    finally:
        batches.close()


def open_db(path: str) -> tuple[sqlite3.Connection, dict[str, str]]:
    """The database for reading. :raises TournamentDBError:."""
    from .db.database import open_readonly

    if not Path(path).exists():
        raise TournamentDBError(f"{path}: no such file")
    return open_readonly(path)
