"""The ``arena view`` and ``arena report`` commands, and ``arena replay --db``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..cli import positive
from ..errors import UsageError
from ..interrupts import stdout_closed
from ..safetext import escape


def read_record(path: str, game: str | None = None) -> list[list[dict[str, Any]]]:
    """Every game of a record file (only game ``game``, if given), at most what one page holds.

    :raises UsageError: unreadable, not a record, no such game, or more than a page holds.
    """
    from ..record import RecordError, read_sized_games
    from .view import MAX_PAGE_BYTES, MAX_PAGE_GAMES

    games: list[list[dict[str, Any]]] = []
    total = 0
    try:
        for events, size in read_sized_games(path):
            if game is not None and events[0]["game"] != game:
                continue
            games.append(events)
            total += size
            if len(games) > MAX_PAGE_GAMES or total > MAX_PAGE_BYTES:
                raise UsageError(
                    f"{path}: more than a page holds ({MAX_PAGE_GAMES} games or {MAX_PAGE_BYTES >> 20} MiB "
                    "of record); choose one game with --game ID"
                )
    except RecordError as exc:
        raise UsageError(str(exc)) from None
    if not games:
        raise UsageError(f"{path}: no game with id {game!r}")
    return games


def sandbox_check(allow_weak: bool) -> Callable[[Any], None]:
    """What a re-play from a database asks before any bot runs: the sandbox the tournament
    requires (every layer, unless ``--allow-weak-sandbox``), whenever a bot is sandboxed."""

    def approve(plan: Any) -> None:
        from ..sandbox.limits import Limits
        from ..tournament.cli import check_sandbox

        limits = Limits(move_seconds=plan.move_time, game_seconds=plan.game_time)
        found = check_sandbox(plan, limits, allow_weak=allow_weak, quiet=True)
        if found and found["missing"]:
            print(
                f"arena: warning: bot files run in a sandbox without {', '.join(found['missing'])} "
                "(--allow-weak-sandbox)",
                file=sys.stderr,
            )

    return approve


def add_trust_options(p: argparse.ArgumentParser) -> None:
    """``--trusted`` and ``--allow-weak-sandbox`` for commands that re-play a database's games."""
    p.add_argument(
        "--trusted",
        action="store_true",
        help="run the database's bots in-process without the sandbox (only for code you trust: "
        "the database itself never makes a bot trusted)",
    )
    p.add_argument(
        "--allow-weak-sandbox",
        action="store_true",
        help="re-play bot files even when this machine's sandbox lacks some layers",
    )


def replay_from_db(db: str, key: str, *, trusted: bool = False, allow_weak: bool = False) -> list[dict[str, Any]]:
    """Re-play one tournament game from its key; its record, checked against the stored result.
    Bots run sandboxed unless ``trusted`` (the command line's ``--trusted``).

    :raises UsageError: a bad database or key, a source that does not match its sha256, or a
        game that came out otherwise (stderr says how).
    """
    from ..tournament.db import TournamentDBError
    from ..tournament.replay import ReplayError, open_db, replay_one

    try:
        conn, meta = open_db(db)
        try:
            record, diffs = replay_one(conn, meta, key, trusted=trusted, approve=sandbox_check(allow_weak))
        finally:
            conn.close()
    except (TournamentDBError, ReplayError) as exc:
        raise UsageError(str(exc)) from None
    if diffs:
        raise UsageError(f"{key}: the re-played game differs from the stored result ({'; '.join(diffs)})")
    assert record.log is not None
    return record.log


def cmd_view(args: argparse.Namespace) -> int:
    from .view import OutputError, check_seat, render_viewer, viewer_game, write_page

    if args.db:
        if not args.game:
            raise UsageError("--db needs --game KEY (a game key like 4p-t0-d3-r1)")
        if args.record:
            raise UsageError("give a record file or --db, not both")
        games = [replay_from_db(args.db, args.game, trusted=args.trusted, allow_weak=args.allow_weak_sandbox)]
        out = Path(args.out or f"{args.game}.html")
        title = f"Yard bridge: game {args.game}"
    else:
        if not args.record:
            raise UsageError("give a record file (written by --replay), or --db FILE --game KEY")
        if args.trusted or args.allow_weak_sandbox:
            raise UsageError("--trusted and --allow-weak-sandbox go with --db (a record file runs no bot)")
        games = read_record(args.record, args.game)
        out = Path(args.out) if args.out else Path(args.record).with_suffix(".html")
        title = f"Yard bridge: {Path(args.record).name}"
    try:
        check_seat(games, args.seat)
        shown = [viewer_game(g, seat=args.seat) for g in games]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        wrote = write_page(out, render_viewer(shown, title=title, seat=args.seat))
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    except BrokenPipeError:
        if stdout_closed():
            raise  # `--out /dev/stdout | head`: ends quietly, as any closed stdout
        raise UsageError(f"{out}: its reader closed it before the page was written") from None
    except OSError as exc:
        raise UsageError(f"{out}: cannot write: {exc.strerror or exc}") from None
    if wrote:  # a stream (--out /dev/stdout) gets the page alone
        print(f"wrote {out} ({len(shown)} game{'s' if len(shown) != 1 else ''}); open it in a browser")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ..tournament.db import TournamentDBError
    from ..tournament.replay import ReplayError
    from .report import ReportError, build_report

    bar: list[Any] = []

    def replayed(done: int, total: int) -> None:  # a progress bar on a terminal, unless --quiet
        if not bar and not args.quiet and sys.stderr.isatty():
            from tqdm import tqdm

            bar.append(tqdm(total=total, unit="game", desc="re-playing", file=sys.stderr, leave=False))
        if bar and done:
            bar[0].update(1)

    try:
        result = build_report(
            args.db,
            args.out,
            replays=args.replays,
            workers=args.workers or os.cpu_count() or 1,
            on_replayed=replayed,
            trusted=args.trusted,
            approve=sandbox_check(args.allow_weak_sandbox),
        )
    except (TournamentDBError, ReplayError, ReportError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        if bar:
            bar.pop().close()
    for line in result.warnings:  # built from database values: escaped, one line each
        print(f"arena: warning: {escape(line, 1200)}", file=sys.stderr)
    print(
        f"wrote {escape(result.index)} ({result.games} games, {result.replayed} re-played); "
        f"publish the folder {escape(args.out)} as it is"
    )
    return 0


def register(sub: Any) -> None:
    """Add ``view`` and ``report`` to the ``arena`` command."""
    p = sub.add_parser(
        "view",
        help="write a game record as an HTML replay viewer",
        description="Write one self-contained HTML page (no network, works from a file) that "
        "replays every game of a record on a drawn table. Open a moment directly with "
        "PAGE.html#game=ID&step=N (step=end for the last one).",
    )
    p.add_argument("record", nargs="?", help="record file written by --replay")
    p.add_argument("--out", "-o", metavar="FILE", help="the page to write (default: RECORD with .html)")
    p.add_argument("--seat", type=int, metavar="N", help="show (and put in the page) only what seat N saw (R10)")
    p.add_argument("--game", metavar="ID", help="only this game (with --db: a game key like 4p-t0-d3-r1)")
    p.add_argument("--db", metavar="FILE", help="re-play the game --game from a tournament database")
    add_trust_options(p)
    p.set_defaults(func=cmd_view)

    p = sub.add_parser(
        "report",
        help="write a tournament's results as a static web site",
        description="Write a static site from a tournament database: standings overall and per "
        "table size with charts, head-to-head heat map, one page per bot, and every "
        "game in a replay viewer (games whose record was not kept are re-played from "
        "the database and checked against the stored result).",
    )
    p.add_argument("--db", default="tournament.sqlite", metavar="FILE", help="tournament database")
    p.add_argument(
        "--out", "-o", required=True, metavar="DIR", help="folder to write (new, or a report written before)"
    )
    p.add_argument("--replays", metavar="DIR", help="records kept by `arena tournament --replays DIR`")
    p.add_argument("--workers", "-j", type=positive, metavar="W", help="parallel re-plays (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_trust_options(p)
    p.set_defaults(func=cmd_report)
