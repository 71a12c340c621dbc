"""Command-line side of ``arena play A B --sprt ELO0,ELO1`` (the test is :mod:`arena.sprt`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .errors import UsageError
from .safetext import safe_line


def _elo_pair(text: str) -> tuple[float, float]:
    from .sprt import parse_sprt

    try:
        return parse_sprt(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _rate(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"an error rate is a number like 0.05, not {text!r}") from None


def add_sprt_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sequential test of two bots")
    g.add_argument(
        "--sprt",
        type=_elo_pair,
        metavar="ELO0,ELO1",
        help="play pairs of games (one deal, seats swapped) until a pentanomial SPRT accepts H0 (the first "
        "bot is at most ELO0 Elo stronger) or H1 (at least ELO1); --games is then the most games to play "
        "(default 20,000); exactly 2 bots; a negative ELO0 is written --sprt=-5,5",
    )
    g.add_argument("--alpha", type=_rate, help="with --sprt: the chance of accepting H1 when H0 holds (default 0.05)")
    g.add_argument("--beta", type=_rate, help="with --sprt: the chance of accepting H0 when H1 holds (default 0.05)")


def check_sprt_options(args: argparse.Namespace) -> Any:
    """The :class:`~arena.sprt.SprtSpec` asked for, or None without ``--sprt``. :raises UsageError:."""
    from .sprt import SprtSpec

    if args.sprt is None:
        for name in ("alpha", "beta"):
            if getattr(args, name) is not None:
                raise UsageError(f"--{name} goes with --sprt")
        return None
    if len(args.bots) != 2:
        raise UsageError(f"--sprt compares exactly 2 bots; {len(args.bots)} given")
    if "human" in args.bots or args.web:
        raise UsageError("--sprt plays bots against each other; it takes no human seat")
    if args.games is not None and (args.games < 2 or args.games % 2):
        raise UsageError(f"with --sprt, --games is the most games to play, in pairs: an even number, not {args.games}")
    elo0, elo1 = args.sprt
    try:
        return SprtSpec(
            elo0, elo1, 0.05 if args.alpha is None else args.alpha, 0.05 if args.beta is None else args.beta
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def play_sprt(args: argparse.Namespace, spec: Any, rules: Any) -> int:
    """``arena play A B --sprt``: play pairs until the test decides (or the cap, or Ctrl-C),
    print the results and the test's verdict (in ``--json``: the document's ``sprt``)."""
    from .cli import finish_play, run_shown
    from .plugins import reporters
    from .sprt import DEFAULT_CAP, PairFeed, Sprt, format_sprt, pair_seeds

    fmt = "json" if args.json else args.format
    if fmt not in reporters():  # before the games, which may be many
        raise UsageError(f"unknown format {fmt!r}; known: {', '.join(sorted(reporters()))}")
    cap = args.games if args.games is not None else DEFAULT_CAP
    test = Sprt(spec)
    feed = PairFeed(test)
    doc = run_shown(
        args,
        rules,
        cap,
        progress=not args.quiet,
        seeds=pair_seeds,
        until=lambda outcome, order: feed.game(outcome.result.places, order),
    )

    def annotate(doc: dict[str, Any]) -> None:
        a, b = (row["bot"] for row in doc["standings"])
        doc["sprt"] = test.doc(a, b, games=doc["games"], cap=cap, interrupted=bool(doc.get("interrupted")))

    def verdict(doc: dict[str, Any]) -> None:
        if fmt != "json":
            for line in format_sprt(doc["sprt"]):
                # csv: stdout stays one table; markdown: the lines are markdown text too
                print(safe_line(line, fmt), file=sys.stderr if fmt == "csv" else sys.stdout)

    return finish_play(doc, fmt, annotate=annotate, after=verdict)
