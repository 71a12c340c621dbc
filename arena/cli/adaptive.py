"""The adaptive side of ``arena tournament`` (``--until-separated``, ``--gauntlet``): its
options, as typed settings, and the run that reports its rounds."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..playing.interrupts import exit_status
from ..trust.text import escape
from .options import positive
from .output import resume_hint, show_seed
from .standings import show_standings


@dataclass(frozen=True)
class AdaptiveSettings:
    """What ``--until-separated`` asks for, and where and how the run reports."""

    db: str
    confidence: float = 0.95
    top: int | None = None
    budget: int | None = None
    gauntlet: bool = False
    replays: str | None = None
    force: bool = False
    fmt: str = "table"
    h2h: bool | None = None
    quiet: bool = False
    #: No ``--seed``: the secret seed is shown after the run.
    secret_seed: bool = False


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


def adaptive_settings(args: argparse.Namespace, fmt: str) -> AdaptiveSettings | None:
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
    if args.top and args.gauntlet:
        raise UsageError("--top and --gauntlet do not go together (a gauntlet compares the bot with each)")
    return AdaptiveSettings(
        db=args.db,
        confidence=args.confidence,
        top=args.top,
        budget=args.budget,
        gauntlet=bool(args.gauntlet),
        replays=args.replays,
        force=args.force,
        fmt=fmt,
        h2h=args.h2h,
        quiet=args.quiet,
        secret_seed=args.seed is None,
    )


def _pair_names(labels: Sequence[str], pairs: Sequence[tuple[int, int]]) -> str:
    return ", ".join(f"{escape(labels[a])}-{escape(labels[b])}" for a, b in pairs)


def run_until_separated(s: AdaptiveSettings, p: Any, backend: Any, *, sandbox: dict[str, Any] | None = None) -> int:
    """``arena tournament --until-separated``: run, say how it ended, print the standings.
    ``sandbox``: the hardening layers in force (as :func:`.dbgames.check_sandbox` printed them),
    stored in the database as a fixed tournament stores them."""
    from ..tournament.backends.local import HarnessError
    from ..tournament.db.database import TournamentDBError
    from ..tournament.db.read import stored_method
    from ..tournament.plan import adaptive
    from ..tournament.runner import SetupError

    sizes = p.schedule.sizes
    try:  # a resume plays on with the method its database was begun with
        design = adaptive.Design(
            len(p.entrants),
            max(x.size for x in sizes),
            tuple(t for x in sorted(sizes, key=lambda x: x.size) for t in x.tables),
            p.schedule.deals,
            s.confidence,
            s.top,
            s.gauntlet,
            stored_method(s.db) or adaptive.METHOD,
        )
    except ValueError as exc:
        raise UsageError(f"{s.db}: {exc}") from None
    budget = s.budget or design.default_budget()
    labels = list(p.labels)

    def say(line: str) -> None:
        if not s.quiet:
            print(escape(line), file=sys.stderr)

    def started(stored: int) -> None:
        if s.fmt == "table":
            for line in p.describe():
                say(line)
            say(
                f"  until separated: {design.method} at {design.confidence:.0%} over {design.family} pairs; "
                f"then rounds of up to {design.round_blocks} deals; budget {budget} games"
            )
        if stored:
            say(f"resuming: {stored} games already in {s.db}")

    last: list[Any] = [None]

    def on_round(state: Any, games: int) -> None:  # a line when the unsettled pairs change
        open_pairs = state.uncertain()
        if open_pairs and set(open_pairs) != last[0]:
            say(f"round {len(state.rounds)}: {games} games; unsettled: {_pair_names(labels, open_pairs)}")
        last[0] = set(open_pairs)

    try:
        result = adaptive.run(
            p,
            design,
            s.db,
            backend,
            budget=budget,
            replays=s.replays,
            force=s.force,
            on_start=started,
            on_round=on_round,
            sandbox=sandbox,
        )
    except (TournamentDBError, SetupError) as exc:
        raise UsageError(str(exc)) from None
    except HarnessError as exc:
        print(f"arena: error: {escape(exc, 400)}; the games stored in {escape(s.db)} are kept", file=sys.stderr)
        return 1
    state = result.state
    open_pairs = state.uncertain()
    if result.status == "interrupted":
        print(resume_hint(result.signum, f"{result.stored} games are", s.db), file=sys.stderr)
        if result.stored:
            show_standings(s.db, fmt=s.fmt, h2h=s.h2h)
        return exit_status(signum=result.signum)
    if result.played:
        say(f"played {result.played} games in {result.elapsed:.1f} s ({result.rate:.1f} games/s)")
    what = "the new bot is separated from each of the field" if design.gauntlet else "every compared pair is separated"
    if result.status == "separated":
        say(f"settled after {result.stored} games: {what} at {design.confidence:.0%}")
    else:
        say(
            f"budget of {budget} games spent after {result.stored} games; still inseparable: "
            f"{_pair_names(labels, open_pairs)}"
        )
    code = show_standings(s.db, fmt=s.fmt, h2h=s.h2h)
    if s.secret_seed and s.fmt != "json":  # the organiser's output: the secret seed, after the run
        show_seed(p.schedule.seed, "and a new --db plays this tournament again")
    return code
