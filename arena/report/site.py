"""``arena report``: a tournament database as a static web site an organiser can publish.

The site is a folder: ``index.html`` (standings overall and per table size,
the same numbers and order as ``arena standings``, charts, head-to-head),
``games.html`` (every game, each linked to the viewer), ``bots/bot-N.html``
(one page per bot), ``viewer.html`` and ``games/<key>.js`` (each game's
record, loaded by the viewer when opened). Records come from the folder kept
by ``arena tournament --replays`` when given, else each game is re-played
from the database (:mod:`arena.tournament.rerun`) and checked against its
stored result; a game that comes out otherwise is shown with a warning.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records.files import RecordError
from ..records.files import read_games as read_record
from ..tournament.db.read import Stored, load
from ..tournament.db.rows import BotRow, has_table, read_faults, read_seat_times
from ..tournament.plan.plan import Plan
from ..tournament.plan.schedule import GameKey
from ..tournament.rerun import RerunError, plan_of, rerun_many, stored_games
from ..tournament.results.finished import GameResult, differences
from ..tournament.results.resultset import results_of
from ..web.view import game_script, render_viewer, viewer_game
from ..web.view import write_page as _write_page
from .pages import TITLE, bot_page, games_page, index_page
from .pages import BotStats as BotStats

#: A report folder holds this file; only such a folder (or an empty or new one) is written.
MARKER = ".arena-report"


class ReportError(Exception):
    """The report cannot be written where asked."""


@dataclass
class ReportResult:
    index: Path
    games: int
    replayed: int
    warnings: list[str] = field(default_factory=list)


def author_of(bot: BotRow, stored: dict[str, str]) -> str | None:
    """The bot's author, as the database stored it from the verified submission manifest. (A
    path stored in the database is never opened: the database is untrusted input.)"""
    return stored.get(bot.label) or None


def prepare(out: Path) -> None:
    """Make ``out`` (new, empty, or a report written before). :raises ReportError:."""
    if out.exists() and not out.is_dir():
        raise ReportError(f"{out}: is a file; --out takes a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise ReportError(f"{out}: a folder that holds other files; give a new or empty folder for the report")
    try:
        (out / "games").mkdir(parents=True, exist_ok=True)
        (out / "bots").mkdir(exist_ok=True)
        (out / MARKER).write_text("written by arena report; arena may rewrite this folder\n", encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"{out}: cannot write: {exc.strerror or exc}") from None


def gather(conn: sqlite3.Connection, stored: Stored) -> list[BotStats]:
    """Per-bot games, faults and move times (every row checked by :mod:`arena.tournament.db.rows`)."""
    stats = [BotStats(b, author_of(b, stored.authors)) for b in stored.bots]
    for g in stored.games:
        for seat, (bot, place, score, loser, faults, retired) in enumerate(g.seats):
            stats[bot].games.append(
                {
                    "key": g.key,
                    "seat": seat,
                    "place": place,
                    "score": score,
                    "loser": loser,
                    "faults": faults,
                    "retired": retired,
                }
            )
    for g, seat, bot, rnd, kind, detail in read_faults(conn, stored.games):
        stats[bot].faults.append({"key": g.key, "seat": seat, "round": rnd, "kind": kind, "detail": detail})
    if has_table(conn, "seat_times"):
        seats = {(g.id, seat): bot for g in stored.games for seat, (bot, *_) in enumerate(g.seats)}
        for s in stats:
            s.timed = True
        for where, (moves, seconds, worst) in read_seat_times(conn, stored.games).items():
            s = stats[seats[where]]
            s.moves, s.seconds, s.worst = s.moves + moves, s.seconds + seconds, max(s.worst, worst)
    for s in stats:
        s.games.sort(key=lambda g: g["key"])
    return stats


def kept_record(folder: Path, stored: GameResult) -> list[dict[str, Any]] | None:
    """The game's record from a ``--replays`` folder, when it is there and ends as stored."""
    path = folder / f"{stored.key}.jsonl"
    if not path.is_file():
        return None
    try:
        games = list(read_record(path))
    except (OSError, UnicodeDecodeError, RecordError):
        return None
    if len(games) != 1:
        return None
    end = games[0][-1]
    if (
        end.get("event") != "end"
        or tuple(end.get("places", ())) != stored.places
        or tuple(end.get("scores", ())) != stored.scores
    ):
        return None
    return games[0]


def records(
    plan: Plan | RerunError,
    stored: list[GameResult],
    replays: str | None,
    workers: int,
    on_replayed: Callable[[int, int], None] | None,
    warnings: list[str],
    approve: Callable[[Plan], None] = lambda plan: None,
) -> tuple[dict[GameKey, list[dict[str, Any]]], int, dict[GameKey, str]]:
    """Every game's record: kept ones first, the rest re-played (``plan``: the database's,
    or why it has none) after ``approve(plan)`` (the command's sandbox check) and checked.
    Returns (records by key, how many were re-played, notes for games that differ).
    ``on_replayed(done, total)`` hears of the re-plays (0 first), for a progress bar."""
    found: dict[GameKey, list[dict[str, Any]]] = {}
    folder = Path(replays) if replays else None
    if folder is not None:
        if not folder.is_dir():
            raise ReportError(f"{folder}: no such folder of kept records")
        for g in stored:
            events = kept_record(folder, g)
            if events is not None:
                found[g.key] = events
    todo = [g for g in stored if g.key not in found]
    notes: dict[GameKey, str] = {}
    if not todo:
        return found, 0, notes
    if isinstance(plan, RerunError):
        warnings.append(f"{len(todo)} games have no viewer: {plan}")
        return found, 0, notes
    approve(plan)
    by_key = {g.key: g for g in todo}
    if on_replayed is not None:
        on_replayed(0, len(todo))
    count = 0
    for record in rerun_many(plan, [g.key for g in todo], workers=min(workers, max(1, len(todo) // 8))):
        diffs = differences(by_key[record.key], record.result())
        if diffs:
            notes[record.key] = "; ".join(diffs)
            warnings.append(f"game {record.key} re-played otherwise than stored ({notes[record.key]})")
        assert record.log is not None
        found[record.key] = record.log
        count += 1
        if on_replayed is not None:
            on_replayed(count, len(todo))
    return found, count, notes


def write_page(path: Path, text: str) -> None:
    """Inside a report folder (checked by :func:`prepare`) arena's own files are rewritten."""
    _write_page(path, text, mine=True)


def build_report(
    db: str,
    out_dir: str,
    *,
    replays: str | None = None,
    workers: int = 1,
    on_replayed: Callable[[int, int], None] | None = None,
    trusted: bool = False,
    approve: Callable[[Plan], None] = lambda plan: None,
    title: str = TITLE,
    house: Sequence[str] = (),
) -> ReportResult:
    """Write the report for the database ``db`` into ``out_dir`` (``on_replayed``, ``approve``: see
    :func:`records`). Every row is checked, and every stored source against its sha256, before
    the folder is made; bots are sandboxed unless ``trusted`` (the command line's, never the
    database's). A folder this call made is removed again when it fails. ``title`` heads every
    page; ``house`` names the bots of the organiser's own (marked, and the others ranked among
    themselves too).

    :raises TournamentDBError:, :raises ReportError:.
    """
    from ..tournament.rerun import open_db

    out = Path(out_dir)
    conn, meta = open_db(db)
    warnings: list[str] = []
    try:
        everything = load(conn, meta)
        results = results_of(everything)  # the same standings, verdicts and counts as `arena standings`
        settings, bots, doc = everything.settings, everything.bots, results.doc
        stats = gather(conn, everything)
        stored = stored_games(everything)
        plan: Plan | RerunError
        try:
            plan = plan_of(conn, everything, trusted=trusted)
        except RerunError as exc:
            plan = exc
    finally:
        conn.close()
    made = not out.exists()
    prepare(out)
    try:
        found, replayed, notes = records(plan, stored, replays, workers, on_replayed, warnings, approve)
    except BaseException:
        if made:  # no partial report left behind
            shutil.rmtree(out, ignore_errors=True)
        raise
    labels = [b.label for b in bots]
    unknown = sorted(set(house) - set(labels))
    if unknown:
        raise ReportError(
            f"--house {', '.join(unknown)[:200]}: no bot of this tournament (its bots: {', '.join(labels)[:400]})"
        )
    listed = []
    for g in stored:
        events = found.get(g.key)
        if events is None:
            continue
        game = viewer_game(events)
        game["id"] = game["label"] = str(g.key)
        write_page(out / "games" / f"{g.key}.js", game_script(game))
        names = [labels[b] for b in g.seating]
        winners = [names[s] for s, p in enumerate(g.places) if p == 1]
        listed.append({"id": str(g.key), "label": str(g.key), "summary": ", ".join(winners) + " first"})
    context = {
        "title": title,
        "house": frozenset(house),
        "db": os.path.basename(db),
        "settings": settings,
        "results": results,
        "created": meta.get("created", ""),
        "arena_version": meta.get("arena_version", ""),
    }
    write_page(
        out / "viewer.html",
        render_viewer(
            listed,
            title=f"{title}: games",
            src="games/",
            back=("index.html", "\u2190 standings"),
            heading=title,
        ),
    )
    write_page(out / "index.html", index_page(doc, stats, context))
    write_page(out / "games.html", games_page(stored, labels, set(found), notes, context))
    for s in stats:
        write_page(out / "bots" / f"bot-{s.bot.bot}.html", bot_page(s, doc, labels, set(found), context))
    return ReportResult(out / "index.html", len(stored), replayed, warnings)
