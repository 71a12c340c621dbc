"""``arena contest ACTION DIR``, the organiser's commands:

* ``init DIR [--house random,heuristic]``: a contest folder and the organiser's token, with its house
  bots (the organiser's own AI, :mod:`arena.server.contest.house`); ``house DIR --add/--remove``;
* ``invite DIR AUTHOR``, ``guest DIR``: an author's token, a guest link for the tables;
* ``final DIR [--round N] ...``: a round's final, played and published (the options of
  ``arena tournament``, the final's defaults: :mod:`.contestfinal`);
* ``round DIR --field K [--no-final]``: round two opens with the best K of round one as its field
  and rules of its own;
* ``disable|enable DIR AUTHOR``: an author's token stops (or starts again) signing in, their
  sessions and sockets end;
* ``pause|resume DIR``: the ladder starts no new game (or plays again), even while ``arena serve``
  runs.

Each token is printed once; the database keeps only its hash."""

from __future__ import annotations

import argparse
from typing import Any

from ..authoring.check import NAME_PATTERN
from ..errors import UsageError
from ..server.contest.house import DEFAULT_HOUSE
from ..trust.text import escape
from .options import add_rules_options, make_rules, positive


def run(args: argparse.Namespace) -> int:
    from ..server.store import database as store

    try:
        if args.action == "init":
            return init(args)
        if args.action == "house":
            return house(args)
        if args.action == "final":
            from .contestfinal import run_final

            return run_final(args)
        if args.action == "round":
            return open_round(args)
        if args.action == "guest":
            return guest(args)
        if args.action in ("disable", "enable"):
            return disable(args)
        if args.action in ("pause", "resume"):
            return pause(args)
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


def init(args: argparse.Namespace) -> int:
    """``init``: the contest folder, its house bots, the organiser's token. :raises store.ContestError:."""
    from ..server.contest import house as houses
    from ..server.store import database as store

    specs = houses.parse(args.house)  # checked before anything is made
    token = store.init_contest(args.dir, args.name or "Yard bridge contest")
    db = store.open_db(args.dir)
    try:
        names = houses.add(db, specs)
    finally:
        db.close()
    print(f"contest created in {escape(args.dir)}")
    print(escape(f"house bots (the organiser's own AI, on the ladder): {', '.join(names) or 'none'}"))
    print(f"organiser token (shown once, keep it secret): {token}")
    return 0


def house(args: argparse.Namespace) -> int:
    """``house DIR [--add LIST] [--remove LIST]``: change the house bots, then list them."""
    from ..server.contest import house as houses
    from ..server.store import database as store

    db = store.open_db(args.dir)
    try:
        if args.add:
            houses.add(db, houses.parse(args.add, "--add"), "--add")
        if args.remove:
            houses.remove(db, [s.strip() for s in args.remove.split(",") if s.strip()])
        found = houses.listing(db)
    finally:
        db.close()
    if not found:
        print("no house bots (add one: arena contest house DIR --add random)")
    for h in found:
        what = "registered bot, played by its name" if h.kind == "registered" else "bot file, played sandboxed"
        state = "on the ladder" if h.playing and h.submission else "waiting for its check" if h.playing else "off"
        print(escape(f"{h.name}: {state} ({what})"))
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
        rnd, picks = rounds.open_round(db, Path(args.dir), args.field, rules, args.variant, args.rule, args.no_final)
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
    if rnd.picked_by != "final":
        print("round one has no final (--no-final): the round-one leaderboard stays as the ladder left it")
    print("uploads are open again; each new submission plays the field and the house bots (the gauntlet)")
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


def pause(args: argparse.Namespace) -> int:
    """Pause or resume the ladder. :raises store.ContestError: no contest."""
    from ..server.ladder.pace import set_paused
    from ..server.store import database as store

    db = store.open_db(args.dir)
    try:
        changed = set_paused(db, args.action == "pause")
    finally:
        db.close()
    if args.action == "pause":
        what = "paused: no new ladder game starts (a block playing ends first)" if changed else "paused already"
    else:
        what = "resumed: the ladder plays again" if changed else "playing already (not paused)"
    print(escape(f"{args.dir}: ladder {what}"))
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


#: Every action, as ``arena contest --help`` and ``arena --help`` name them.
ACTIONS = "init, house, invite, guest, final, round, disable, enable, pause, resume"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "contest",
        help=f"the organiser's commands for `arena serve`'s contest folder ({ACTIONS})",
        description="The organiser's commands: init (create a contest folder and its house bots), house (change "
        "the house bots), invite (an author's token), guest (a link for the tables), final (play and publish a "
        "round's final), round (open round two), disable and enable (an author's token), pause and resume (the "
        "ladder).",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    init = actions.add_parser(
        "init", help="create the contest folder and its house bots; prints the organiser's token once"
    )
    init.add_argument("dir", metavar="DIR")
    init.add_argument("--name", help="the contest's name, shown on its pages and its finals")
    init.add_argument(
        "--house",
        default=",".join(DEFAULT_HOUSE),
        metavar="BOTS",
        help="the organiser's own AI on the ladder: registered bots or bot files, comma-separated "
        f"(default {','.join(DEFAULT_HOUSE)}: the 2012 demo AI's play and the reference heuristic; none: none)",
    )
    hse = actions.add_parser("house", help="list the house bots; --add or --remove some")
    hse.add_argument("dir", metavar="DIR")
    hse.add_argument("--add", metavar="BOTS", help="registered bots or bot files to put on the ladder, comma-separated")
    hse.add_argument("--remove", metavar="BOTS", help="house bots to take off the ladder (their games stay)")
    inv = actions.add_parser("invite", help="add an author; prints their token once")
    inv.add_argument("dir", metavar="DIR")
    inv.add_argument("author", metavar="AUTHOR")
    gst = actions.add_parser("guest", help="make a signed guest link: a person without a token plays at the tables")
    gst.add_argument("dir", metavar="DIR")
    gst.add_argument("--name", help="the guest's name (letters, digits, - or _; default: a random one)")
    gst.add_argument("--hours", type=float, default=24.0, help="how long the link works (default 24, at most 336)")
    gst.add_argument("--url", default="http://127.0.0.1:8000", help="the server's address the link starts with")
    from .contestfinal import register_final

    register_final(actions)
    rnd = actions.add_parser(
        "round",
        help="open round two: the best K of round one form the field, the rules may change",
        description="Open round two: the best K of round one's authors' bots (by the published round-one "
        "final's standings; with --no-final by the ladder's ratings) form the field; new submissions play "
        "against it and the house bots under the round's rules.",
    )
    rnd.add_argument("dir", metavar="DIR")
    rnd.add_argument("--field", type=positive, required=True, metavar="K", help="how many of round one form the field")
    rnd.add_argument(
        "--no-final",
        action="store_true",
        help="open round two although round one's final was not published (round one then has no final)",
    )
    add_rules_options(rnd)
    for action, what in (
        ("disable", "disable an author: their token stops signing in, their sessions and sockets end"),
        ("enable", "enable a disabled author again (their token signs in again)"),
    ):
        dis = actions.add_parser(action, help=what)
        dis.add_argument("dir", metavar="DIR")
        dis.add_argument("author", metavar="AUTHOR")
    for action, what in (
        ("pause", "pause the ladder: no new game starts until resumed (also while arena serve runs)"),
        ("resume", "let a paused ladder play again"),
    ):
        act = actions.add_parser(action, help=what)
        act.add_argument("dir", metavar="DIR")
    p.set_defaults(func=run)
