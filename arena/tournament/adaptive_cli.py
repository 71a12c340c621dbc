"""Command-line side of adaptive tournaments and gauntlets (``--until-separated``,
``--gauntlet``), and the separation section of ``arena standings``."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..cli import positive
from ..errors import UsageError
from ..safetext import escape
from .db import GameRow


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a confidence is a number like 0.95, not {text!r}") from None
    if not 0.5 <= value < 1:
        raise argparse.ArgumentTypeError(f"a confidence is at least 0.5 and below 1, not {text}")
    return value


def add_adaptive_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("adaptive tournaments and gauntlets")
    g.add_argument(
        "--until-separated",
        action="store_true",
        help="play rounds of duplicate deals where the order is unsettled, until every adjacent pair "
        "of the standings is separated at --confidence or --budget games are spent",
    )
    g.add_argument(
        "--confidence",
        type=_confidence,
        default=0.95,
        metavar="C",
        help="with --until-separated: the chance that no claimed separation is wrong (default 0.95)",
    )
    g.add_argument(
        "--top",
        type=positive,
        metavar="K",
        help="with --until-separated: only settle places 1 to K+1 (the top K and who comes next)",
    )
    g.add_argument(
        "--budget",
        type=positive,
        metavar="GAMES",
        help="with --until-separated: stop after this many games (default: 200 first rounds)",
    )
    g.add_argument(
        "--gauntlet",
        nargs="+",
        metavar="FIELD",
        help="play the one BOT against this field: every table holds it (with --until-separated: "
        "until it is separated from each of them)",
    )


def check_adaptive_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The adaptive options, or None without ``--until-separated``. :raises UsageError:."""
    if args.gauntlet and len(args.bots) != 1:
        raise UsageError(
            f"--gauntlet plays one bot against a field; {len(args.bots)} given before it "
            f"(put the field after --gauntlet)"
        )
    if not args.until_separated:
        for name in ("top", "budget"):
            if getattr(args, name) is not None:
                raise UsageError(f"--{name} goes with --until-separated")
        return None
    if args.players and len(args.players) != 1:
        raise UsageError("--until-separated plays one table size; give one --players size")
    if args.top and args.gauntlet:
        raise UsageError("--top and --gauntlet do not go together (a gauntlet compares the bot with each)")
    return {"confidence": args.confidence, "top": args.top, "budget": args.budget}


def gauntlet_plan(p: Any, max_tables: int) -> Any:
    """``p`` (whose first entrant is the new bot) with every table holding the new bot."""
    from .runner import SetupError
    from .schedule import gauntlet_schedule, with_tables

    if len(p.schedule.sizes) != 1:
        raise SetupError("a gauntlet plays one table size; give one --players size")
    size = p.schedule.sizes[0].size
    try:
        tables = gauntlet_schedule(len(p.entrants) - 1, size, max_tables, p.schedule.seed)
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    return replace(p, schedule=with_tables(p.schedule, tables, "gauntlet"))


def _pair_names(state: Any, labels: Sequence[str], pairs: Sequence[tuple[int, int]]) -> str:
    return ", ".join(f"{escape(labels[a])}-{escape(labels[b])}" for a, b in pairs)


def run_until_separated(
    args: argparse.Namespace, p: Any, backend: Any, fmt: str, *, sandbox: dict[str, Any] | None = None
) -> int:
    """``arena tournament --until-separated``: run, say how it ended, print the standings.
    ``sandbox``: the hardening layers in force (as :func:`.cli.check_sandbox` printed them),
    stored in the database as a fixed tournament stores them."""
    from . import adaptive
    from .cli import show_standings
    from .db import TournamentDBError
    from .dbread import stored_method
    from .local import HarnessError
    from .runner import SetupError

    size = p.schedule.sizes[0]
    try:  # a resume plays on with the method its database was begun with
        design = adaptive.Design(
            len(p.entrants),
            size.size,
            size.tables,
            p.schedule.deals,
            args.confidence,
            args.top,
            bool(args.gauntlet),
            stored_method(args.db) or adaptive.METHOD,
        )
    except ValueError as exc:
        raise UsageError(f"{args.db}: {exc}") from None
    budget = args.budget or design.default_budget()
    labels = list(p.labels)

    def say(line: str) -> None:
        if not args.quiet:
            print(escape(line), file=sys.stderr)

    def started(stored: int) -> None:
        if fmt == "table":
            for line in p.describe():
                say(line)
            say(
                f"  until separated: {design.method} at {design.confidence:.0%} over {design.family} pairs; "
                f"then rounds of up to {design.round_blocks} deals; budget {budget} games"
            )
        if stored:
            say(f"resuming: {stored} games already in {args.db}")

    last: list[Any] = [None]

    def on_round(state: Any, games: int) -> None:  # a line when the unsettled pairs change
        open_pairs = state.uncertain()
        if open_pairs and set(open_pairs) != last[0]:
            say(f"round {len(state.rounds)}: {games} games; unsettled: {_pair_names(state, labels, open_pairs)}")
        last[0] = set(open_pairs)

    try:
        result = adaptive.run(
            p,
            design,
            args.db,
            backend,
            budget=budget,
            replays=args.replays,
            force=args.force,
            on_start=started,
            on_round=on_round,
            sandbox=sandbox,
        )
    except (TournamentDBError, SetupError) as exc:
        raise UsageError(str(exc)) from None
    except HarnessError as exc:
        print(f"arena: error: {escape(exc, 400)}; the games stored in {escape(args.db)} are kept", file=sys.stderr)
        return 1
    state = result.state
    open_pairs = state.uncertain()
    if result.status == "interrupted":
        from ..interrupts import exit_status, signal_word

        command = shlex.join(["arena", *sys.argv[1:]]) if sys.argv[1:2] == ["tournament"] else "the same command"
        print(
            f"arena: {signal_word(result.signum)}: {result.stored} games are stored in {args.db}. Resume with:\n"
            f"  {command}\n(`arena standings --db {shlex.quote(args.db)}` shows the standings so far)",
            file=sys.stderr,
        )
        if result.stored:
            show_standings(args.db, fmt=fmt, h2h=args.h2h)
        return exit_status(signum=result.signum)
    if result.played:
        say(f"played {result.played} games in {result.elapsed:.1f} s ({result.rate:.1f} games/s)")
    what = "the new bot is separated from each of the field" if design.gauntlet else "every compared pair is separated"
    if result.status == "separated":
        say(f"settled after {result.stored} games: {what} at {design.confidence:.0%}")
    else:
        say(
            f"budget of {budget} games spent after {result.stored} games; still inseparable: "
            f"{_pair_names(state, labels, open_pairs)}"
        )
    code = show_standings(args.db, fmt=fmt, h2h=args.h2h)
    if args.seed is None and fmt != "json":  # the organiser's output: the secret seed, after the run
        from ..cli import show_seed

        show_seed(p.schedule.seed, "and a new --db plays this tournament again")
    return code


def separation_of(
    tables: dict[int, tuple[tuple[int, ...], ...]],
    settings: dict[str, Any],
    labels: Sequence[str],
    games: Sequence[GameRow],
    doc: dict[str, Any],
) -> dict[str, Any]:
    """The separation section of the standings: an adaptive tournament's sequential verdicts
    (its decisions replayed from the stored games), else fixed-sample paired intervals of the
    overall order's neighbours."""
    from .separation import adaptive_doc, fixed_doc

    if "adaptive" in settings:
        from .adaptive import Replay, design_of

        design = design_of(settings, len(labels), [t for size in sorted(tables) for t in tables[size]])
        replay = Replay(design, budget=max(len(games), 1))
        replay.feed(games)
        replay.advance()
        return adaptive_doc(labels, games, replay.state)
    order = [r["bot"] for r in doc["overall"]["standings"] if r["games"]]
    gauntlet = "gauntlet" in settings.get("schedule", {}).values()
    return fixed_doc(labels, games, order, gauntlet=gauntlet)
