"""``arena play``: games between bots (``--sprt``: a sequential test of two; ``--web``: the
human seat in a browser)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..game.rules import Rules
from ..playing.match import MatchHooks, MatchResult, MatchSettings, run_match
from ..trust.text import safe_line
from .options import add_limit_options, add_rules_options, at_most, limits_from_args, parse_seed, rules_from_args
from .output import MatchDisplay, check_format, finish_play, to_stderr

if TYPE_CHECKING:
    from ..playing.sprt import SprtSpec

#: The most games one ``arena play`` runs (about a quarter of an hour of reference bots).
MAX_PLAY_GAMES = 1_000_000

#: The most processes ``arena play --workers`` starts.
MAX_WORKERS = 64


@dataclass(frozen=True)
class PlayOptions:
    """How ``arena play`` shows a match: the results format, ``--verbose``, ``--quiet``."""

    fmt: str = "table"
    verbose: bool = False
    quiet: bool = False


def run(args: argparse.Namespace) -> int:
    if not 2 <= len(args.bots) <= 6:
        raise UsageError(f"R2.1: 2 to 6 bots sit at a table; {len(args.bots)} given")
    rules = rules_from_args(args)
    try:
        rules.check_players(len(args.bots))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    sprt = sprt_spec(args)
    show = PlayOptions("json" if args.json else args.format, args.verbose, args.quiet)
    if sprt is not None:
        from ..playing.sprt import DEFAULT_CAP

        return play_sprt(settings(args, rules, args.games or DEFAULT_CAP), sprt, show)
    human = "human" in args.bots
    if args.workers > 1 and (human or args.web):
        raise UsageError("--workers plays bots against each other; it takes no human seat")
    games = args.games if args.games is not None else (1 if human else 100)
    if args.web:
        return play_web(settings(args, rules, games), show, host=args.host, port=args.port)
    result = play_shown(settings(args, rules, games), show, progress=not (args.quiet or human))
    return finish_play(result, show.fmt, verbose=show.verbose)


def settings(args: argparse.Namespace, rules: Rules, games: int) -> MatchSettings:
    return MatchSettings(
        bots=tuple(args.bots),
        games=games,
        seed=args.seed,
        rules=rules,
        limits=limits_from_args(args),
        trusted=args.trusted,
        record_file=args.replay,
        force=args.force,
        workers=args.workers,
    )


def play_shown(
    match: MatchSettings, show: PlayOptions, *, progress: bool, hooks: MatchHooks | None = None, status: Any = None
) -> MatchResult:
    """:func:`~arena.playing.match.run_match` with the ``play`` command's progress bar and ``-v`` lines."""
    steer = hooks or MatchHooks()
    display = MatchDisplay(match.games, verbose=show.verbose, progress=progress, status=status)
    try:
        return run_match(
            match, MatchHooks(on_game=display.game, notice=to_stderr, seeds=steer.seeds, until=steer.until)
        )
    finally:
        display.close()


# -- --web ------------------------------------------------------------------------


def play_web(match: MatchSettings, show: PlayOptions, *, host: str, port: int) -> int:
    """Serve the seat, play the match, say where the record is."""
    from ..web.play import play_web as serve_and_play

    def serving(url: str) -> None:
        print(f"arena: your seat is at {url}", file=sys.stderr, flush=True)
        print("arena: open it in a browser (Ctrl-C here stops the match)", file=sys.stderr, flush=True)

    display = MatchDisplay(match.games, verbose=show.verbose, progress=False)
    result, record_file = serve_and_play(
        match, MatchHooks(on_game=display.game, notice=to_stderr), host=host, port=port, on_serving=serving
    )
    if result.games:
        print(f"arena: the record is in {record_file}", file=sys.stderr)
    return finish_play(result, show.fmt, verbose=show.verbose)  # 130 for Ctrl-C, 143 for SIGTERM


# -- --sprt -----------------------------------------------------------------------


def _elo_pair(text: str) -> tuple[float, float]:
    from ..playing.sprt import parse_sprt

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


def sprt_spec(args: argparse.Namespace) -> SprtSpec | None:
    """The test asked for, or None without ``--sprt``. :raises UsageError:."""
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
    from ..playing.sprt import SprtSpec

    try:
        return SprtSpec(
            elo0, elo1, 0.05 if args.alpha is None else args.alpha, 0.05 if args.beta is None else args.beta
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def play_sprt(match: MatchSettings, spec: SprtSpec, show: PlayOptions) -> int:
    """``arena play A B --sprt``: play pairs until the test decides (or the cap, or Ctrl-C),
    print the results and the test's verdict (in ``--json``: the document's ``sprt``). The
    progress bar shows the LLR between its bounds."""
    from ..playing.sprt import PairFeed, Sprt, format_sprt, pair_seeds

    check_format(show.fmt)  # before the games, which may be many
    cap = match.games
    test = Sprt(spec)
    feed = PairFeed(test)

    def status() -> str:
        return f"LLR {test.llr:+.2f} ({spec.lower:+.2f}, {spec.upper:+.2f})"

    result = play_shown(
        match,
        show,
        progress=not show.quiet,
        hooks=MatchHooks(seeds=pair_seeds, until=lambda outcome, order: feed.game(outcome.result.places, order)),
        status=status,
    )

    def annotate(doc: dict[str, Any]) -> None:
        a, b = (row["bot"] for row in doc["standings"])
        doc["sprt"] = test.doc(a, b, games=doc["games"], cap=cap, interrupted=bool(doc.get("interrupted")))

    def verdict(doc: dict[str, Any]) -> None:
        if show.fmt != "json":
            for line in format_sprt(doc["sprt"]):
                # csv: stdout stays one table; markdown: the lines are markdown text too
                print(safe_line(line, show.fmt), file=sys.stderr if show.fmt == "csv" else sys.stdout)

    return finish_play(result, show.fmt, verbose=show.verbose, annotate=annotate, after=verdict)


# -- the parser -------------------------------------------------------------------


def register(sub: Any) -> None:
    p = sub.add_parser(
        "play",
        help="play games between 2 to 6 bots and print results",
        description="Play games between bots (registered names like `greedy`, or .py files). "
        "Seats rotate from game to game so every bot sits in every seat equally often.",
    )
    p.add_argument(
        "bots", nargs="+", metavar="BOT", help="registered bot name or path to a bot file; `human` seats you"
    )
    p.add_argument(
        "--games",
        "-n",
        type=at_most(MAX_PLAY_GAMES),
        default=None,
        help=f"games to play (default 100; 1 with a human seat; at most {MAX_PLAY_GAMES:,})",
    )
    p.add_argument(
        "--seed",
        type=parse_seed,
        default=None,
        help="master seed; same seed, same output (default: a fresh secret seed, shown after the games)",
    )
    p.add_argument(
        "--replay", metavar="FILE", help="write every game record to FILE (JSON Lines); an existing FILE is refused"
    )
    p.add_argument("--force", action="store_true", help="let --replay replace an existing FILE")
    p.add_argument("--verbose", "-v", action="store_true", help="print each game's log")
    p.add_argument("--json", action="store_true", help="results as JSON (same as --format json)")
    p.add_argument("--format", default="table", help="results format: table, markdown, csv, json (default table)")
    p.add_argument(
        "--trusted",
        action="store_true",
        help="run bot files in-process without the sandbox (fast; only for code you trust)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument(
        "--workers",
        "-j",
        type=at_most(MAX_WORKERS),
        default=1,
        metavar="N",
        help="play N games at once in N processes (default 1); the results are the same for any N",
    )
    p.add_argument(
        "--web",
        action="store_true",
        help="seat `human` in a browser: serve the table on this machine and print its address",
    )
    p.add_argument("--host", default="127.0.0.1", help="with --web: address to serve on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="with --web: port (default: any free one)")
    add_limit_options(p)
    add_rules_options(p)
    add_sprt_options(p)
    p.set_defaults(func=run)
