"""``arena contest final DIR [--round N] ...``: play and publish a round's final from the command line.

The options are ``arena tournament``'s (its types and their words, from :mod:`.options` and
:mod:`.adaptive`), with the final's defaults (docs/RULINGS.md 136): every table size the entrants
fill, rounds of duplicate deals until adjacent ranks are separated at 95% or the budget (the
tournament's default, 200 first rounds) is spent; ``--games N`` alone plays a fixed schedule of N
deals a table instead. Run again, a final that stopped resumes with the settings it was begun with.
The tournament and the report print as they do when typed (the schedule, progress, standings);
then where the site is and what it announces.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..errors import UsageError
from ..tournament.plan.schedule import MAX_DEALS, MAX_TABLES
from ..trust.text import escape
from .adaptive import _confidence
from .options import add_limit_options, at_most, check_ray_backend, parse_seed, positive
from .tournament import _sizes

#: The options that make settings (given none, a final that stopped resumes with its own).
SETTINGS = (
    *("players", "games", "until_separated", "budget", "confidence", "top", "seed", "max_tables"),
    *("move_seconds", "game_seconds", "no_house", "entrants"),
)


def settings_of(args: argparse.Namespace) -> Any:
    """The options as :class:`~arena.server.contest.final.FinalSettings`; None when none was given."""
    from ..server.contest.final import FinalSettings

    if all(getattr(args, name) in (None, False) for name in SETTINGS):
        return None
    if not args.until_separated:
        for name in ("budget", "top", "confidence"):
            if getattr(args, name) is not None and args.games is not None:
                raise UsageError(f"--{name} goes with --until-separated (--games N alone plays a fixed schedule)")
    separated = args.until_separated or args.games is None
    return FinalSettings(
        players=args.players,
        until_separated=separated,
        games=args.games,
        budget=args.budget if separated else None,
        confidence=args.confidence if args.confidence is not None else 0.95,
        top=args.top if separated else None,
        seed=args.seed,
        max_tables=args.max_tables,
        move_seconds=args.move_seconds,
        game_seconds=args.game_seconds,
        house=not args.no_house,
        entrants=tuple(x.strip() for x in args.entrants.split(",") if x.strip()) if args.entrants else None,
    )


def run_final(args: argparse.Namespace) -> int:
    """Begin (or resume) round N's final, play it, publish it, say what it announces.
    :raises store.ContestError:."""
    from pathlib import Path

    from ..server.contest import final, lineup, publish
    from ..server.contest.rounds import current_number
    from ..server.store import database as store

    folder = Path(args.dir)
    settings = settings_of(args)
    check_ray_backend(args.backend, args.ray_address)
    db = store.open_db(folder)
    try:
        number = args.round or current_number(db)
        word = final.ORDINAL.get(number, str(number))
        if args.restart:
            why = lineup.restart(db, folder, number)
            if why:
                raise UsageError(why)
            print(f"the round-{word} final is cleared: run `arena contest final {escape(args.dir)}` to begin it anew")
            return 0
        if args.list:
            for e in lineup.pool(db, number):
                who = "house bot" if e.house else f"by {e.author}"
                print(escape(f"{e.label}: {e.bot} v{e.version} ({who}), uploaded in round {e.round}"))
            return 0
        resumed = final.settings_of(final.state(db, number)) is not None
        was_frozen = store.setting(db, "frozen") == "1"
        why, chosen = lineup.begin(db, number, settings, pid=os.getpid(), freeze=args.freeze)
        if why is not None:
            raise UsageError(why)
        if args.freeze and not was_frozen:
            print("submissions are frozen (the final plays the frozen versions; round two reopens them)")
        entrants = lineup.entrants(db, number, chosen)
        who = ", ".join(e.label + (" (house)" if e.house else f" ({e.author})") for e in entrants)
        print(escape(f"{'resuming' if resumed else 'playing'} the final of round {word} in {args.dir}: {who}"))
        print(escape(f"settings: {chosen.described()}"))
        sys.stdout.flush()
        workers = args.workers or os.cpu_count() or 1
        backend = ["--backend", args.backend, "--workers", str(workers)]
        backend += ["--ray-address", args.ray_address] if args.ray_address else []
        try:
            done = publish.run(db, folder, number, chosen, backend, show=True)
        except KeyboardInterrupt:
            print(f"arena: stopped; run `arena contest final {escape(args.dir)}` again to resume", file=sys.stderr)
            return 130
        data = final.state(db, number)
    finally:
        db.close()
    if not done:
        raise UsageError(f"the round-{word} final was not published: {data.get('detail', '')}")
    site = final.home(folder, number) / "site"
    print(escape(f"published: {site}/index.html (served at /final/{number}/)"))
    print(escape(announced(final.home(folder, number) / "final.sqlite", data)))
    return 0


def announced(db: Any, data: dict[str, Any]) -> str:
    """What the final announces, in one line: its champion only when separated from the next."""
    from ..report.pages import authors_ranks, champion_line
    from ..tournament.results.resultset import load_results

    doc = load_results(db).doc
    house = frozenset(str(x) for x in data.get("house", []))
    line = champion_line(doc, house)
    level = f"{line['level']:.0%}"
    if line["champion"]:
        house_bot = " (a house bot)" if line["house"] else ""
        text = f"champion: {line['champion']}{house_bot}, separated from the next at {level}"
    else:
        how = "share first place" if line["shared"] else f"are not separated at {level}"
        tied = sorted(line["open"]) if line["shared"] else line["open"]  # a shared place has no order
        text = f"no champion is named: {', '.join(tied)} {how}"
    if house:
        ranks = authors_ranks(doc["overall"]["standings"], house)
        text += "; authors' ranks: " + ", ".join(f"{r}. {bot}" for bot, r in ranks.items())
    return text


def register_final(actions: Any) -> None:
    p = actions.add_parser(
        "final",
        help="play and publish a round's final (the options of `arena tournament`; run again, it resumes)",
        description="Play round N's final (the current round's by default) with the options of `arena "
        "tournament`, under the round's rules, and publish it as a site (DIR/final/N/site, served at /final/N/). "
        "Default: every approved active version of the rounds so far and the house bots, every table size "
        "they fill, rounds of duplicate deals until adjacent ranks are separated at 95% or the budget is spent. "
        "Submissions must be frozen. Run again, a final that stopped resumes with its own settings.",
    )
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--round", type=positive, metavar="N", help="the round whose final is played (default: the current)")
    p.add_argument(
        "--players",
        "-k",
        type=_sizes,
        metavar="K",
        help="table sizes: 4, 2,4,6 or 2-6 (default: each the entrants fill)",
    )
    p.add_argument(
        "--games",
        "-n",
        type=at_most(MAX_DEALS),
        metavar="N",
        help="deals per table: alone, a fixed schedule of N deals; with --until-separated the first round's",
    )
    p.add_argument(
        "--until-separated",
        action="store_true",
        help="play until adjacent ranks are separated or --budget games are spent (the default unless --games)",
    )
    p.add_argument("--budget", type=positive, metavar="GAMES", help="games at most (default: 200 first rounds)")
    p.add_argument("--confidence", type=_confidence, metavar="C", help="separation's confidence (default 0.95)")
    p.add_argument("--top", type=positive, metavar="K", help="only settle places 1 to K+1")
    p.add_argument("--seed", type=parse_seed, metavar="S", help="the final's seed (default: a fresh secret one)")
    p.add_argument("--max-tables", type=at_most(MAX_TABLES), metavar="N", help="tables per size at most")
    p.add_argument("--no-house", action="store_true", help="leave the house bots out (they play by default, marked)")
    p.add_argument(
        "--entrants", metavar="LABELS", help="the entrants, comma-separated (default: all that --list shows)"
    )
    p.add_argument("--list", action="store_true", help="list the possible entrants and play nothing")
    p.add_argument(
        "--freeze", action="store_true", help="freeze submissions as the final begins (as the desk's Freeze does)"
    )
    p.add_argument("--restart", action="store_true", help="clear a final that stopped, once DIR/final/N was moved away")
    p.add_argument("--workers", "-j", type=positive, metavar="W", help="parallel games (default: all cores)")
    p.add_argument("--backend", choices=("local", "ray"), default="local", help="local processes or a Ray cluster")
    p.add_argument("--ray-address", metavar="ADDR", help="the Ray cluster to join")
    add_limit_options(p)
