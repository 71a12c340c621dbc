"""``arena view``: a game record (or one game re-played from a database) as an HTML viewer."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..playing.interrupts import stdout_closed
from .dbgames import replay_from_db
from .options import add_trust_options


def read_record(path: str, game: str | None = None) -> list[list[dict[str, Any]]]:
    """Every game of a record file (only game ``game``, if given), at most what one page holds.

    :raises UsageError: unreadable, not a record, no such game, or more than a page holds.
    """
    from ..records.files import RecordError, read_sized_games
    from ..web.view import MAX_PAGE_BYTES, MAX_PAGE_GAMES

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


def run(args: argparse.Namespace) -> int:
    from ..web.view import OutputError, check_seat, render_viewer, viewer_game, write_page

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


def register(sub: Any) -> None:
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
    p.set_defaults(func=run)
