"""``arena contest init DIR``, ``arena contest invite DIR AUTHOR`` and ``arena contest guest DIR``: a
contest folder, its tokens and its guest links; ``arena contest round DIR --field K``: round two opens
with the best K of round one as its field and rules of its own; ``arena contest disable|enable DIR
AUTHOR``: an author's token stops (or starts again) signing in, their sessions and sockets end.

Each token is printed once; the database keeps only its hash."""

from __future__ import annotations

import argparse
from typing import Any

from ..authoring.check import NAME_PATTERN
from ..errors import UsageError
from ..trust.text import escape
from .options import add_rules_options, make_rules, positive


def run(args: argparse.Namespace) -> int:
    from ..server.store import database as store

    try:
        if args.action == "init":
            token = store.init_contest(args.dir, args.name or "Yard bridge contest")
            print(f"contest created in {escape(args.dir)}")
            print(f"organiser token (shown once, keep it secret): {token}")
            return 0
        if args.action == "round":
            return open_round(args)
        if args.action == "guest":
            return guest(args)
        if args.action in ("disable", "enable"):
            return disable(args)
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


def open_round(args: argparse.Namespace) -> int:
    """Open round two; print its rules and its field. :raises store.ContestError:."""
    import sqlite3
    from pathlib import Path

    from ..server.contest import rounds
    from ..server.store import database as store

    rules = make_rules(args.variant, args.rule)  # the rules options of `arena tournament`: one line when bad
    db = store.open_db(args.dir)
    try:
        rnd, picks = rounds.open_round(db, Path(args.dir), args.field, rules, args.variant, args.rule)
    except sqlite3.Error as exc:  # a read-only or locked database: nothing was written
        raise UsageError(f"{args.dir}: cannot open round two: {exc}") from None
    finally:
        db.close()
    changed = ", ".join(f"{k}={v}" for k, v in rnd.rules.changed().items())
    print(escape(f"round {rnd.number} is open in {args.dir}: rules {args.variant}{', ' + changed if changed else ''}"))
    how = "the round-one final's standings" if rnd.picked_by == "final" else "the round-one ladder's ratings"
    print(f"the field, by {how}:")
    for rank, p in enumerate(picks, 1):
        print(escape(f"  {rank}. {p.bot} v{p.version} ({p.author}) sha256 {p.sha256[:16]}"))
    print("uploads are open again; each new submission plays the field (the gauntlet)")
    return 0


def disable(args: argparse.Namespace) -> int:
    """Disable or enable an author. :raises store.ContestError: no such author, no contest."""
    from ..server.store import authors
    from ..server.store import database as store

    db = store.open_db(args.dir)
    try:
        changed = authors.set_disabled(db, args.author, args.action == "disable")
    finally:
        db.close()
    done = f"{args.action}d" if changed else f"{args.action}d already"
    what = " (their sessions and open tables' sockets end; their bots stay)" if args.action == "disable" else ""
    print(escape(f"author {args.author} {done}{what}"))
    return 0


def guest(args: argparse.Namespace) -> int:
    """``arena contest guest DIR [--name N] [--hours H] [--url BASE]``: a signed guest link."""
    import secrets

    from ..server.routes.tables import MAX_GUEST_HOURS, guest_link
    from ..server.store import database as store

    name = args.name or f"g{secrets.token_hex(2)}"
    if not NAME_PATTERN.fullmatch(name):
        raise UsageError(f"guest name {name[:60]!r}: use letters, digits, - or _, from a letter, at most 40")
    if not 0 < args.hours <= MAX_GUEST_HOURS:
        raise UsageError(f"--hours {args.hours:g}: a guest link lives more than 0 and at most {MAX_GUEST_HOURS} hours")
    db = store.open_db(args.dir)
    try:
        secret = store.setting(db, "session_key")
    finally:
        db.close()
    link = args.url.rstrip("/") + guest_link(secret, name, args.hours)
    print(f"guest link for guest-{name} (valid {args.hours:g} h; whoever opens it plays at the tables): {link}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "contest",
        help="create a contest folder for `arena serve`, invite, disable or enable authors, guest links, round two",
        description="Create a contest folder (its SQLite database), invite an author to it, disable or enable an "
        "author, make a guest link for the tables, or open round two.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    init = actions.add_parser("init", help="create the contest folder; prints the organiser's token once")
    init.add_argument("dir", metavar="DIR")
    init.add_argument("--name", help="the contest's name, shown on its pages")
    inv = actions.add_parser("invite", help="add an author; prints their token once")
    inv.add_argument("dir", metavar="DIR")
    inv.add_argument("author", metavar="AUTHOR")
    rnd = actions.add_parser(
        "round",
        help="open round two: the best K of round one form the field, the rules may change",
        description="Open round two: the best K of round one (by the published final's standings, else by the "
        "ladder's ratings) form the field; new submissions play against it under the round's rules.",
    )
    rnd.add_argument("dir", metavar="DIR")
    rnd.add_argument("--field", type=positive, required=True, metavar="K", help="how many of round one form the field")
    add_rules_options(rnd)
    for action, what in (
        ("disable", "disable an author: their token stops signing in, their sessions and sockets end"),
        ("enable", "enable a disabled author again (their token signs in again)"),
    ):
        dis = actions.add_parser(action, help=what)
        dis.add_argument("dir", metavar="DIR")
        dis.add_argument("author", metavar="AUTHOR")
    gst = actions.add_parser("guest", help="make a signed guest link: a person without a token plays at the tables")
    gst.add_argument("dir", metavar="DIR")
    gst.add_argument("--name", help="the guest's name (letters, digits, - or _; default: a random one)")
    gst.add_argument("--hours", type=float, default=24.0, help="how long the link works (default 24, at most 336)")
    gst.add_argument("--url", default="http://127.0.0.1:8000", help="the server's address the link starts with")
    p.set_defaults(func=run)
