"""``arena replay``: print games of a record file (or one re-played from a database) as a log."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from .options import add_trust_options


def run(args: argparse.Namespace) -> int:
    from ..records.files import RecordError, format_game, read_games

    if args.db:
        return replay_db(args)
    if args.trusted or args.allow_weak_sandbox:
        raise UsageError("--trusted and --allow-weak-sandbox go with --db (a record file runs no bot)")
    if not args.file:
        raise UsageError("give a record file, or --db FILE --game KEY")
    shown = 0
    games = read_games(args.file)
    while True:  # only reading is guarded: a closed stdout (`| head`) ends the run quietly in main
        try:
            events = next(games, None)
        except RecordError as exc:
            raise UsageError(str(exc)) from None
        if events is None:
            break
        if args.game is not None and events[0]["game"] != args.game:
            continue
        seats = len(events[0]["players"])
        if args.seat is not None and not 0 <= args.seat < seats:
            raise UsageError(f"--seat {args.seat}: game {events[0]['game']} has seats 0 to {seats - 1}")
        for line in format_game(events, seat=args.seat):
            print(line)
        print()
        shown += 1
    if shown == 0:
        raise UsageError(f"{args.file}: no game with id {args.game!r}")
    return 0


def replay_db(args: argparse.Namespace) -> int:
    """``arena replay --db FILE --game KEY``: re-play a tournament game and print its log."""
    from ..records.files import format_game
    from .dbgames import replay_from_db

    if not args.game:
        raise UsageError("--db needs --game KEY (a game key like 4p-t0-d3-r1)")
    if args.file:
        raise UsageError("give a record file or --db, not both")
    events = replay_from_db(args.db, args.game, trusted=args.trusted, allow_weak=args.allow_weak_sandbox)
    seats = len(events[0].get("players", []))
    if args.seat is not None and not 0 <= args.seat < seats:
        raise UsageError(f"--seat {args.seat}: game {args.game} has seats 0 to {seats - 1}")
    for line in format_game(events, seat=args.seat):
        print(line)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help="print a game record as a readable log",
        description="Print games from a record file (docs/record-format.md) as a readable log.",
    )
    p.add_argument("file", nargs="?", help="record file written by --replay")
    p.add_argument("--game", help="only the game with this id (with --db: a game key like 4p-t0-d3-r1)")
    p.add_argument("--db", metavar="FILE", help="re-play the game --game from a tournament database")
    p.add_argument("--seat", type=int, help="show only what this seat could see (R10)")
    add_trust_options(p)
    p.set_defaults(func=run)
