"""``arena standings``: a tournament database's standings (finished or not)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import UsageError
from ..trust.text import escape, to_json

#: The standings formats.
FORMATS = ("table", "markdown", "csv", "json")


def show_standings(db_path: str, *, fmt: str = "table", h2h: bool | None = None) -> int:
    """Print a database's standings: ``table`` (terminal), ``markdown``, ``csv`` (one row per
    bot and scope) or ``json`` (with the settings and bots too)."""
    from ..tournament.db.read import DamagedDB, TournamentDBError
    from ..tournament.results.resultset import load_results
    from ..tournament.results.standings import format_standings, standings_csv

    try:
        results = load_results(db_path)  # every row type-checked: a damaged one is one line
    except TournamentDBError as exc:
        raise UsageError(f"{db_path}: {exc}" if isinstance(exc, DamagedDB) else str(exc)) from None
    stored, doc = results.stored, results.doc
    settings, bots, games, total, authors = stored.settings, stored.bots, stored.games, stored.total, stored.authors
    if not results.finished and "seed" in settings:
        # Shown once all games are played: partial standings may be posted while bots still play.
        settings = dict(settings, seed="hidden until every game is played")
    if fmt == "json":
        out = {
            "db": db_path,
            "settings": settings,
            "bots": [{**vars(b), **({"author": authors.get(b.label)} if authors else {})} for b in bots],
            "games": len(games),
            "total": total,
            **{k: v for k, v in doc.items() if k != "rank_rule"},
        }
        try:
            text = to_json(out)
        except ValueError as exc:  # a hostile database's settings, nested thousands deep
            raise UsageError(f"{db_path}: damaged tournament database ({exc})") from None
        print(text)
    elif fmt == "csv":
        print(standings_csv(doc))
    else:
        if len(games) < total:
            print(f"(partial: {len(games)} of {total} games played)")
        print(format_standings(doc, h2h=h2h, fmt=fmt))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.file is not None and args.db is not None and args.file != args.db:
        both = f"{escape(args.file)} and --db {escape(args.db)}"
        print(f"arena: error: two databases given ({both}); name one", file=sys.stderr)
        return 2
    db = args.file or args.db or "tournament.sqlite"
    return show_standings(db, fmt="json" if args.json else args.format, h2h=args.h2h)


def add_h2h_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--h2h",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print the head-to-head table (default: when 16 bots or fewer)",
    )


def register(sub: Any) -> None:
    p = sub.add_parser(
        "standings",
        help="print a tournament database's standings",
        description="Print the standings of a tournament database (finished or not).",
    )
    p.add_argument("file", nargs="?", metavar="DB", help="results database (the same as --db DB)")
    p.add_argument("--db", default=None, metavar="FILE", help="results database (default tournament.sqlite)")
    p.add_argument("--json", action="store_true", help="standings as JSON (as --format json)")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (terminal), markdown, csv (one row per bot and scope) or json",
    )
    add_h2h_option(p)
    p.set_defaults(func=run)
