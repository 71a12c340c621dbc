"""``arena contest init DIR`` and ``arena contest invite DIR AUTHOR``: a contest folder and its tokens.

Each token is printed once; the database keeps only its hash."""

from __future__ import annotations

import argparse
from typing import Any

from ..author import NAME_PATTERN
from ..errors import UsageError
from ..safetext import escape


def run(args: argparse.Namespace) -> int:
    from ..server import store

    try:
        if args.action == "init":
            token = store.init_contest(args.dir, args.name or "Yard bridge contest")
            print(f"contest created in {escape(args.dir)}")
            print(f"organiser token (shown once, keep it secret): {token}")
            return 0
        if not NAME_PATTERN.fullmatch(args.author):
            raise UsageError(
                f"author name {args.author[:60]!r}: use letters, digits, - or _, from a letter, at most 40"
            )
        db = store.open_db(args.dir)
        try:
            token = store.invite(db, args.author)
        finally:
            db.close()
    except store.ContestError as exc:
        raise UsageError(str(exc)) from None
    print(f"author token for {args.author} (shown once; give it to them privately): {token}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "contest",
        help="create a contest folder for `arena serve`, invite authors",
        description="Create a contest folder (its SQLite database) or invite an author to it.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    init = actions.add_parser("init", help="create the contest folder; prints the organiser's token once")
    init.add_argument("dir", metavar="DIR")
    init.add_argument("--name", help="the contest's name, shown on its pages")
    inv = actions.add_parser("invite", help="add an author; prints their token once")
    inv.add_argument("dir", metavar="DIR")
    inv.add_argument("author", metavar="AUTHOR")
    p.set_defaults(func=run)
