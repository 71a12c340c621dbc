"""``arena tournament`` and ``arena standings``."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any

from ..cli import (
    add_limit_options,
    add_rules_options,
    at_most,
    limits_from_args,
    parse_seed,
    positive,
    rules_from_args,
    show_seed,
    to_stderr,
)
from ..errors import UsageError
from ..interrupts import exit_status, signal_word
from ..safetext import escape, to_json
from .adaptive_cli import add_adaptive_options, check_adaptive_options, gauntlet_plan, run_until_separated
from .schedule import DEFAULT_MAX_TABLES, MAX_DEALS, MAX_TABLES, parse_sizes

FORMATS = ("table", "markdown", "csv", "json")


def _sizes(text: str) -> tuple[int, ...]:
    try:
        return parse_sizes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_tournament(args: argparse.Namespace) -> int:
    from ..sandbox.limits import usable_cpus
    from ..seeds import fresh_seed, warn_if_guessable
    from .db import TournamentDBError, stored_seed
    from .local import HarnessError
    from .runner import SetupError, local_backend, plan, preflight, ray_backend, run

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
    adaptive_opts = check_adaptive_options(args)
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
        )
        if args.gauntlet:
            p = gauntlet_plan(p, args.max_tables)
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
    if args.backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UsageError("the ray backend needs Ray: pip install 'yard-bridge-arena[ray]'") from None
        if args.ray_address:
            from .ray_backend import probe

            try:
                probe(args.ray_address)  # seconds, not Ray's minutes of retries, and before the database
            except HarnessError as exc:
                raise UsageError(str(exc)) from None
        backend = ray_backend(workers, args.ray_address)
    else:
        if args.ray_address:
            raise UsageError("--ray-address goes with --backend ray")
        backend = local_backend(workers)

    def started(done: int, total: int) -> None:  # the database accepted this tournament
        if not args.quiet and fmt == "table":
            for line in p.describe():
                print(escape(line), file=sys.stderr)
        if done and not args.quiet:
            print(f"resuming: {done} of {total} games already in {args.db}", file=sys.stderr)
        if not args.quiet and done < total and sys.stderr.isatty():
            from tqdm import tqdm

            bar.append(
                tqdm(total=total, initial=done, unit="game", file=sys.stderr, smoothing=0.05, dynamic_ncols=True)
            )

    bar: list[Any] = []  # the progress bar, once the run has started

    def played(count: int) -> None:
        if bar:
            bar[0].update(count)

    if adaptive_opts is not None:
        return run_until_separated(args, p, backend, fmt, sandbox=sandbox)
    try:
        result = run(
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
        command = shlex.join(["arena", *sys.argv[1:]]) if sys.argv[1:2] == ["tournament"] else "the same command"
        print(
            f"arena: {signal_word(result.signum)}: {result.done} of {result.total} games are stored in {args.db}. "
            f"Resume with:\n  {command}\n(`arena standings --db {shlex.quote(args.db)}` shows the standings so far)",
            file=sys.stderr,
        )
        if result.done:  # the standings so far, as `arena play` prints its results so far
            show_standings(args.db, fmt=fmt, h2h=args.h2h)
        return exit_status(signum=result.signum)
    if not args.quiet and result.played:
        print(f"played {result.played} games in {result.elapsed:.1f} s ({result.rate:.1f} games/s)", file=sys.stderr)
    code = show_standings(args.db, fmt=fmt, h2h=args.h2h)
    if args.seed is None and fmt != "json":  # the JSON document holds the seed
        show_seed(seed, "and a new --db plays this tournament again")
    return code


def check_sandbox(p: Any, limits: Any, *, allow_weak: bool, quiet: bool) -> dict[str, Any] | None:
    """The hardening layers bot files will run under (None when every entrant is trusted).

    Prints them in one line; refuses, naming the missing layers, unless ``allow_weak``.
    """
    if all(e.trusted for e in p.entrants):
        return None
    from ..sandbox.pool import sandbox_layers

    layers = sandbox_layers(limits)
    active = [name for name, state in layers.items() if state == "active"]
    missing = [name for name in layers if name not in active]
    line = f"sandbox: {len(active)}/{len(layers)} layers active ({', '.join(active) or 'none'})"
    if missing:
        line += "; missing: " + "; ".join(f"{name} ({layers[name]})" for name in missing)
    if missing and not allow_weak:
        raise UsageError(
            f"the sandbox lacks {', '.join(missing)} on this machine and bot files are untrusted "
            f"code; fix that (see docs/SECURITY.md), or pass --allow-weak-sandbox to run anyway"
        )
    if not quiet:
        print(line.replace("\n", " "), file=sys.stderr)
    return {"layers": layers, "missing": missing, "allowed_weak": bool(missing and allow_weak)}


def show_standings(db_path: str, *, fmt: str = "table", h2h: bool | None = None, as_json: bool = False) -> int:
    """Print a database's standings: ``table`` (terminal), ``markdown``, ``csv`` (one row per
    bot and scope) or ``json`` (with the settings and bots too)."""
    from .adaptive_cli import separation_of
    from .dbread import DamagedDB, TournamentDBError, load, open_readonly
    from .standings import format_standings, kind_of, standings_csv, standings_doc

    fmt = "json" if as_json else fmt

    try:
        conn, meta = open_readonly(db_path)
        try:
            stored = load(conn, meta)  # every row type-checked: a damaged one is one line
        finally:
            conn.close()
    except TournamentDBError as exc:
        raise UsageError(f"{db_path}: {exc}" if isinstance(exc, DamagedDB) else str(exc)) from None
    settings, bots, games, total, authors = stored.settings, stored.bots, stored.rows, stored.total, stored.authors
    labels = [b.label for b in bots]
    doc = standings_doc(labels, games, [kind_of(b.origin) for b in bots], authors)
    doc["separation"] = separation_of(stored.tables, settings, labels, games, doc)
    finished = doc["separation"].get("status") == "separated" if "adaptive" in settings else len(games) >= total
    if not finished and "seed" in settings:
        # Shown once all games are played: partial standings may be posted while bots still play.
        settings = dict(settings, seed="hidden until every game is played")
    if fmt == "json":
        out = {
            "db": db_path,
            "settings": settings,
            "bots": [{**vars(b), **({"author": authors.get(b.label)} if authors else {})} for b in bots],
            "games": len(games),
            "total": total,
            **doc,
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


def cmd_standings(args: argparse.Namespace) -> int:
    if args.file is not None and args.db is not None and args.file != args.db:
        both = f"{escape(args.file)} and --db {escape(args.db)}"
        print(f"arena: error: two databases given ({both}); name one", file=sys.stderr)
        return 2
    db = args.file or args.db or "tournament.sqlite"
    return show_standings(db, fmt="json" if args.json else args.format, h2h=args.h2h)


def register(sub: Any) -> None:
    """Add ``tournament`` and ``standings`` to the ``arena`` command."""
    p = sub.add_parser(
        "tournament",
        help="round-robin tournament with duplicate seating, results in a database",
        description="Play every combination of K bots (or a balanced schedule when there are too many), each deal "
        "once per seat rotation so every bot plays every seat's cards, store each game in an SQLite "
        "database as it ends, and print standings. Running the same command again resumes.",
    )
    p.add_argument(
        "bots", nargs="+", metavar="BOT", help="registered bot name, bot file, or folder of bot files (its *.py)"
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
    p.add_argument(
        "--h2h",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print the head-to-head table (default: when 16 bots or fewer)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or schedule lines")
    add_adaptive_options(p)
    add_limit_options(p)
    add_rules_options(p)
    p.set_defaults(func=cmd_tournament)

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
    p.add_argument(
        "--h2h",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print the head-to-head table (default: when 16 bots or fewer)",
    )
    p.set_defaults(func=cmd_standings)
