"""``arena tournament``: a round-robin (or a gauntlet) with duplicate seating, every game
stored in a database as it ends, then the standings."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..errors import UsageError
from ..playing.interrupts import exit_status
from ..tournament.plan.schedule import DEFAULT_MAX_TABLES, MAX_DEALS, MAX_TABLES, parse_sizes
from ..trust.text import escape
from .adaptive import adaptive_settings, add_adaptive_options, run_until_separated
from .dbgames import check_sandbox
from .options import (
    add_limit_options,
    add_rules_options,
    at_most,
    check_ray_backend,
    limits_from_args,
    parse_seed,
    positive,
    rules_from_args,
)
from .output import progress_bar, resume_hint, show_seed, to_stderr
from .standings import FORMATS, add_h2h_option, show_standings


def _sizes(text: str) -> tuple[int, ...]:
    try:
        return parse_sizes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_cache(folder: str | None) -> str | None:
    """``--build-cache DIR``: a folder (made when missing). :raises UsageError: something else is there."""
    if folder is None:
        return None
    if os.path.lexists(folder) and (os.path.islink(folder) or not os.path.isdir(folder)):
        raise UsageError(f"--build-cache {escape(folder, 200)}: not a folder (a build cache is a folder of its own)")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as exc:
        why = exc.strerror or exc
        raise UsageError(f"--build-cache {escape(folder, 200)}: cannot make the folder: {why}") from None
    return folder


def run(args: argparse.Namespace) -> int:
    from ..game.seeds import fresh_seed, warn_if_guessable
    from ..sandbox.limits import usable_cpus
    from ..tournament.backends.local import HarnessError
    from ..tournament.builds import prebuild
    from ..tournament.db.database import TournamentDBError, stored_seed
    from ..tournament.runner import SetupError, gauntlet_plan, local_backend, plan, preflight, ray_backend
    from ..tournament.runner import run as run_tournament

    rules = rules_from_args(args)
    limits = limits_from_args(args)
    cpus = usable_cpus()
    workers = args.workers or cpus
    seed = args.seed
    if seed is None:  # a resume plays on with the database's seed; a new tournament gets a secret one
        seed = stored_seed(args.db)
        if seed is None:
            seed = fresh_seed()
    fmt = "json" if args.json else args.format
    if not args.bots and not args.team:
        raise UsageError("give the bots to play (registered names, bot files or folders), or --team NAME=BOT1,BOT2")
    if rules.teams and (args.gauntlet or args.until_separated):
        what = "--gauntlet" if args.gauntlet else "--until-separated"
        raise UsageError(f"{what} does not go with the teams variant (teams play a fixed schedule)")
    adaptive_opts = adaptive_settings(args, fmt)
    deals = args.games if args.games is not None else 1 if args.until_separated else 10
    try:
        p = plan(
            [*args.bots, *(args.gauntlet or [])],
            sizes=args.players,
            deals=deals,
            seed=seed,
            rules=rules,
            trusted=args.trusted,
            max_tables=args.max_tables,
            allow_unverified=args.allow_unverified,
            limits=limits,
            teams=args.team or (),
        )
        if args.gauntlet:
            p = gauntlet_plan(p, args.max_tables)
        p = prebuild(p, build_cache(args.build_cache))  # each bot program's build once for the run
        for warning in preflight(p):
            print(f"arena: warning: {escape(warning, 1200)}", file=sys.stderr)
    except SetupError as exc:
        raise UsageError(str(exc)) from None
    warn_if_guessable(seed, untrusted=p.untrusted, notice=to_stderr)
    if args.backend == "local" and workers > cpus:
        print(
            f"arena: warning: --workers {workers} is more than the {cpus} CPUs this machine gives; games will "
            f"share CPUs and run no faster (time limits count CPU time, so no bot is faulted for it)",
            file=sys.stderr,
        )
    sandbox = check_sandbox(p, limits, allow_weak=args.allow_weak_sandbox, quiet=args.quiet or fmt != "table")
    check_ray_backend(args.backend, args.ray_address)
    backend = ray_backend(workers, args.ray_address) if args.backend == "ray" else local_backend(workers)

    def started(done: int, total: int) -> None:  # the database accepted this tournament
        if not args.quiet and fmt == "table":
            for line in p.describe():
                print(escape(line), file=sys.stderr)
        if done and not args.quiet:
            print(f"resuming: {done} of {total} games already in {args.db}", file=sys.stderr)
        if not args.quiet and done < total and sys.stderr.isatty():
            bar.append(progress_bar(total, initial=done, smoothing=0.05, dynamic_ncols=True))

    bar: list[Any] = []  # the progress bar, once the run has started

    def played(count: int) -> None:
        if bar:
            bar[0].update(count)

    if adaptive_opts is not None:
        return run_until_separated(adaptive_opts, p, backend, sandbox=sandbox)
    try:
        result = run_tournament(
            p,
            args.db,
            backend,
            replays=args.replays,
            on_start=started,
            on_played=played,
            force=args.force,
            sandbox=sandbox,
        )
    except (TournamentDBError, SetupError) as exc:
        raise UsageError(str(exc)) from None
    except HarnessError as exc:
        print(f"arena: error: {escape(exc, 400)}; the games stored in {escape(args.db)} are kept", file=sys.stderr)
        return 1
    finally:
        if bar:
            bar.pop().close()
    if result.interrupted:
        print(resume_hint(result.signum, f"{result.done} of {result.total} games are", args.db), file=sys.stderr)
        if result.done:  # the standings so far, as `arena play` prints its results so far
            show_standings(args.db, fmt=fmt, h2h=args.h2h)
        return exit_status(signum=result.signum)
    if not args.quiet and result.played:
        print(f"played {result.played} games in {result.elapsed:.1f} s ({result.rate:.1f} games/s)", file=sys.stderr)
    code = show_standings(args.db, fmt=fmt, h2h=args.h2h)
    if args.seed is None and fmt != "json":  # the JSON document holds the seed
        show_seed(seed, "and a new --db plays this tournament again")
    return code


def register(sub: Any) -> None:
    p = sub.add_parser(
        "tournament",
        help="round-robin tournament with duplicate seating, results in a database",
        description="Play every combination of K bots (or a balanced schedule when there are too many), each deal "
        "once per seat rotation so every bot plays every seat's cards, store each game in an SQLite "
        "database as it ends, and print standings. Running the same command again resumes.",
    )
    p.add_argument(
        "bots",
        nargs="*",
        metavar="BOT",
        help="registered bot name, bot file, or folder of bot files (its *.py); with the teams variant each "
        "is a team of that bot in both partner seats",
    )
    p.add_argument(
        "--team",
        action="append",
        metavar="NAME=BOT1,BOT2",
        help="with the teams variant (--variant teams): a team of two bots that sit opposite (repeatable)",
    )
    p.add_argument(
        "--players",
        "-k",
        type=_sizes,
        metavar="K",
        help="table sizes: 4, 2,4,6 or 2-6 (default 4, or all bots when fewer)",
    )
    p.add_argument(
        "--games",
        "-n",
        type=at_most(MAX_DEALS),
        default=None,
        metavar="N",
        help="deals per table, each played once per seat rotation (default 10; with "
        "--until-separated the first round's, default 1)",
    )
    p.add_argument(
        "--seed",
        type=parse_seed,
        default=None,
        metavar="S",
        help="tournament seed; same seed, same games (default: a fresh secret seed, kept in the "
        "database for resuming and shown after the run)",
    )
    p.add_argument(
        "--workers",
        "-j",
        type=positive,
        default=None,
        metavar="W",
        help=f"parallel games (default: all {os.cpu_count()} cores; more is warned about)",
    )
    p.add_argument(
        "--db", default="tournament.sqlite", metavar="FILE", help="results database (default tournament.sqlite)"
    )
    p.add_argument(
        "--backend", choices=("local", "ray"), default="local", help="local worker processes (default) or a Ray cluster"
    )
    p.add_argument("--ray-address", metavar="ADDR", help="Ray cluster to join (default: start a local one)")
    p.add_argument(
        "--replays",
        metavar="DIR",
        help="write each game's record to DIR/<game>.jsonl; DIR must be new, empty or this "
        "tournament's own (a resumed run keeps writing into it)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="let --replays write into a folder that holds other files or another tournament's records",
    )
    p.add_argument(
        "--build-cache",
        metavar="DIR",
        help="keep the builds of bot programs (bot.toml's build) in DIR and take them from there in later "
        "runs (default: each build runs once per run, kept nowhere)",
    )
    p.add_argument(
        "--max-tables",
        type=at_most(MAX_TABLES),
        default=DEFAULT_MAX_TABLES,
        metavar="N",
        help=f"per table size, beyond this many combinations play a balanced schedule of about "
        f"this many tables (default {DEFAULT_MAX_TABLES})",
    )
    p.add_argument(
        "--trusted",
        action="store_true",
        help="run bot files in-process without the sandbox (fast; only for code you trust)",
    )
    p.add_argument(
        "--allow-unverified",
        action="store_true",
        help="play bot files of a submissions folder that have no manifest or changed since "
        "`arena submit` (refused by default)",
    )
    p.add_argument(
        "--allow-weak-sandbox",
        action="store_true",
        help="run bot files even when a hardening layer is missing on this machine",
    )
    p.add_argument("--json", action="store_true", help="standings as JSON (as --format json)")
    p.add_argument("--format", choices=FORMATS, default="table", help="standings output (default table)")
    add_h2h_option(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or schedule lines")
    add_adaptive_options(p)
    add_limit_options(p)
    add_rules_options(p)
    p.set_defaults(func=run)
