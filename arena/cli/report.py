"""``arena report``: a tournament's results as a static web site."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..errors import UsageError
from ..report.pages import TITLE
from ..trust.text import escape
from .dbgames import sandbox_check
from .options import add_trust_options, positive
from .output import progress_bar


def run(args: argparse.Namespace) -> int:
    from ..report.site import ReportError, build_report
    from ..tournament.db.database import TournamentDBError
    from ..tournament.rerun import RerunError

    bar: list[Any] = []

    def replayed(done: int, total: int) -> None:  # a progress bar on a terminal, unless --quiet
        if not bar and not args.quiet and sys.stderr.isatty():
            bar.append(progress_bar(total, desc="re-playing", leave=False))
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
            title=args.title,
            house=args.house,
        )
    except (TournamentDBError, RerunError, ReportError) as exc:
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


def title_text(text: str) -> str:
    """A site title: printable, one line, at most 200 characters."""
    if not text.strip() or not text.isprintable() or len(text) > 200:
        raise argparse.ArgumentTypeError("a title is one line of printable text, at most 200 characters")
    return text.strip()


def register(sub: Any) -> None:
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
    p.add_argument(
        "--title",
        type=title_text,
        default=TITLE,
        metavar="TEXT",
        help=f"the site's title, on every page (default {TITLE!r}; e.g. a contest's name and round)",
    )
    p.add_argument(
        "--house",
        action="append",
        default=[],
        metavar="BOT",
        help="a bot of the organiser's own (repeatable): marked 'house bot' on every page, and the other "
        "bots ranked among themselves too (an authors' rank column)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_trust_options(p)
    p.set_defaults(func=run)
