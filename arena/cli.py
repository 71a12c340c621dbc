"""The ``arena`` command: one sub-command per job, errors as one line, never a traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from . import __version__
from .errors import BotLoadError, UsageError
from .interrupts import SIGPIPE_STATUS, exit_status, quiet_stdout, signal_word, sigterm_as_ctrl_c, stdout_closed
from .rules import Rules, parse_setting
from .safetext import escape, to_json
from .sprt_cli import add_sprt_options

if TYPE_CHECKING:
    from .referee import GameOutcome


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports a bad command line as one line (plus a hint), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


# -- shared options ---------------------------------------------------------


def add_rules_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--variant", default="contest", metavar="NAME", help="rule variant (see `arena rules --list`; default: contest)"
    )
    p.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change one rule knob, e.g. --rule limit=101 (repeatable)",
    )


def rules_from_args(args: argparse.Namespace) -> Rules:
    from .plugins import variants

    known = variants()
    if args.variant not in known:
        raise UsageError(f"unknown variant {args.variant!r}; known: {', '.join(sorted(known))}")
    rules = known[args.variant]
    changes: dict[str, Any] = {}
    for text in args.rule:
        try:
            key, value = parse_setting(text)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        changes[key] = value
    if changes:
        try:
            rules = rules.replace(**changes)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"bad rule setting: {exc}") from None
    return rules


def parse_seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is a whole number, not {text!r}") from None


def seconds(text: str) -> float:
    """A positive, finite number of seconds (``--move-time``, ``--game-time``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0 and at most 86400, not {text}")
    return value


def add_limit_options(p: argparse.ArgumentParser) -> None:
    """``--move-time`` and ``--game-time``: the CPU-time limits of sandboxed bots."""
    p.add_argument(
        "--move-time",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="CPU time a sandboxed bot may use per move (default 1)",
    )
    p.add_argument(
        "--game-time",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="CPU time a sandboxed bot may use per game (default 30)",
    )


def limits_from_args(args: argparse.Namespace) -> Any:
    """The sandbox :class:`~arena.sandbox.Limits` the options ask for (the defaults when none)."""
    from .sandbox.limits import Limits

    changes = {}
    if getattr(args, "move_time", None) is not None:
        changes["move_seconds"] = args.move_time
    if getattr(args, "game_time", None) is not None:
        changes["game_seconds"] = args.game_time
    limits = Limits(**changes)
    if limits.move_seconds > limits.game_seconds:
        raise UsageError(f"--move-time {limits.move_seconds:g} is more than the game's {limits.game_seconds:g} s")
    return limits


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text[:40]!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, not {value}")
    return value


#: The most games one ``arena play`` runs (about a quarter of an hour of reference bots).
MAX_PLAY_GAMES = 1_000_000


def at_most(limit: int) -> Callable[[str], int]:
    """An argparse type: a whole number from 1 to ``limit`` (larger ones would only run for days)."""

    def parse(text: str) -> int:
        value = positive(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"at most {limit:,}, not {value:,}")
        return value

    parse.__name__ = "count"  # argparse names the type in its messages
    return parse


# -- arena play ---------------------------------------------------------------


def cmd_play(args: argparse.Namespace) -> int:
    from .sprt_cli import check_sprt_options, play_sprt

    if not 2 <= len(args.bots) <= 6:
        raise UsageError(f"R2.1: 2 to 6 bots sit at a table; {len(args.bots)} given")
    rules = rules_from_args(args)
    try:
        rules.check_players(len(args.bots))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    sprt = check_sprt_options(args)
    if sprt is not None:
        return play_sprt(args, sprt, rules)
    human = "human" in args.bots
    games = args.games if args.games is not None else (1 if human else 100)
    if args.web:
        from .web.play import play_web

        return play_web(args, rules, games)
    doc = run_shown(args, rules, games, progress=not (args.quiet or human))
    return finish_play(doc, "json" if args.json else args.format)


def finish_play(
    doc: dict[str, Any],
    fmt: str,
    *,
    annotate: Callable[[dict[str, Any]], None] | None = None,
    after: Callable[[dict[str, Any]], None] | None = None,
) -> int:
    """How a ``play`` run ends: its results in ``fmt`` (none when stopped before a game
    ended), then a fresh secret seed; the exit status (130/143 when interrupted).
    ``annotate`` adds to the document before it is printed, ``after`` prints below it."""
    status = exit_status(signum=doc.pop("stopped_by", None))
    secret = doc.pop("secret_seed", False)
    if doc.get("interrupted") and not doc["games"]:
        return status
    if annotate is not None:
        annotate(doc)
    emit_results(doc, fmt)
    if after is not None:
        after(doc)
    if secret and fmt != "json":  # the JSON document holds the seed
        show_seed(doc["seed"], "plays these games again")
    return status if doc.get("interrupted") else 0


def run_shown(args: argparse.Namespace, rules: Rules, games: int, *, progress: bool, **extra: Any) -> dict[str, Any]:
    """:func:`~arena.match.run_match` with the ``play`` command's options, its progress bar
    and ``-v`` lines; ``extra`` goes to ``run_match`` (``--sprt``: its seeds and stopping rule)."""
    from .match import run_match

    show = MatchDisplay(games, verbose=args.verbose, progress=progress)
    try:
        return run_match(
            args.bots,
            games=games,
            seed=args.seed,
            rules=rules,
            replay=args.replay,
            force=args.force,
            trusted=args.trusted,
            limits=limits_from_args(args),
            on_game=show.game,
            notice=to_stderr,
            **extra,
        )
    finally:
        show.close()


def to_stderr(line: str) -> None:
    """A notice for the user (a warning, how a run ended): one line on stderr."""
    print(line, file=sys.stderr)


class MatchDisplay:
    """What ``arena play`` shows while games run: each game's text (``--verbose``), or a
    progress bar on a terminal (not for one game, a human seat or ``--quiet``)."""

    def __init__(self, games: int, *, verbose: bool = False, progress: bool = True) -> None:
        self.verbose = verbose
        self.bar: Any = None
        if progress and sys.stderr.isatty() and games > 1 and not verbose:
            from tqdm import tqdm

            self.bar = tqdm(total=games, unit="game", file=sys.stderr, leave=False)

    def game(self, outcome: GameOutcome) -> None:
        """One game played, recorded and tallied."""
        if self.verbose:
            from .record import format_game

            for line in format_game(outcome.log):
                print(line)
            print()
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def show_seed(seed: int, what: str) -> None:
    """After a run with a fresh secret seed: the seed, on stderr, to reproduce the run."""
    print(f"seed {seed} (--seed {seed} {what})", file=sys.stderr)


def emit_results(doc: dict[str, Any], fmt: str) -> None:
    from .plugins import reporters

    found = reporters()
    if fmt not in found:
        raise UsageError(f"unknown format {fmt!r}; known: {', '.join(sorted(found))}")
    print(found[fmt](doc))


# -- arena replay -------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    from .record import RecordError, format_game, read_games

    if args.db:
        return replay_db(args)
    if args.trusted or args.allow_weak_sandbox:
        raise UsageError("--trusted and --allow-weak-sandbox go with --db (a record file runs no bot)")
    if not args.file:
        raise UsageError("give a record file, or --db FILE --game KEY")
    shown = 0
    games = read_games(args.file)
    while True:  # only reading is guarded: a closed stdout (`| head`) ends the run quietly in main
        try:
            events = next(games, None)
        except RecordError as exc:
            raise UsageError(str(exc)) from None
        if events is None:
            break
        if args.game is not None and events[0]["game"] != args.game:
            continue
        seats = len(events[0]["players"])
        if args.seat is not None and not 0 <= args.seat < seats:
            raise UsageError(f"--seat {args.seat}: game {events[0]['game']} has seats 0 to {seats - 1}")
        for line in format_game(events, seat=args.seat):
            print(line)
        print()
        shown += 1
    if shown == 0:
        raise UsageError(f"{args.file}: no game with id {args.game!r}")
    return 0


def replay_db(args: argparse.Namespace) -> int:
    """``arena replay --db FILE --game KEY``: re-play a tournament game and print its log."""
    from .record import format_game
    from .web.cli import replay_from_db

    if not args.game:
        raise UsageError("--db needs --game KEY (a game key like 4p-t0-d3-r1)")
    if args.file:
        raise UsageError("give a record file or --db, not both")
    events = replay_from_db(args.db, args.game, trusted=args.trusted, allow_weak=args.allow_weak_sandbox)
    seats = len(events[0].get("players", []))
    if args.seat is not None and not 0 <= args.seat < seats:
        raise UsageError(f"--seat {args.seat}: game {args.game} has seats 0 to {seats - 1}")
    for line in format_game(events, seat=args.seat):
        print(line)
    return 0


# -- arena rules --------------------------------------------------------------


def cmd_rules(args: argparse.Namespace) -> int:
    from .plugins import variants
    from .rules_text import describe_rules

    if args.list:
        for name, rules in sorted(variants().items()):
            changed = rules.changed()
            settings = ", ".join(f"{k}={v}" for k, v in changed.items()) or "the contest rules"
            print(escape(f"{name:14} {settings}"))  # a plugin's variant names and values
        return 0
    rules = rules_from_args(args)
    if args.json:
        print(to_json(rules.to_dict()))
    else:
        print("\n".join(escape(line) for line in describe_rules(rules).splitlines()))
    return 0


# -- the parser ---------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="arena",
        description="Referee, sandbox and tournaments for yard bridge bots.",
        epilog="Run `arena COMMAND --help` for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)

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
        "--web",
        action="store_true",
        help="seat `human` in a browser: serve the table on this machine and print its address",
    )
    p.add_argument("--host", default="127.0.0.1", help="with --web: address to serve on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="with --web: port (default: any free one)")
    add_limit_options(p)
    add_rules_options(p)
    add_sprt_options(p)
    p.set_defaults(func=cmd_play)

    p = sub.add_parser(
        "replay",
        help="print a game record as a readable log",
        description="Print games from a record file (docs/record-format.md) as a readable log.",
    )
    p.add_argument("file", nargs="?", help="record file written by --replay")
    p.add_argument("--game", help="only the game with this id (with --db: a game key like 4p-t0-d3-r1)")
    p.add_argument("--db", metavar="FILE", help="re-play the game --game from a tournament database")
    p.add_argument("--seat", type=int, help="show only what this seat could see (R10)")
    from .web.cli import add_trust_options

    add_trust_options(p)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser(
        "rules",
        help="print the rules in force",
        description="Print the rules in force: the contest defaults and any knobs changed.",
    )
    p.add_argument("--list", action="store_true", help="list the rule variants")
    p.add_argument("--json", action="store_true", help="the settings as JSON")
    add_rules_options(p)
    p.set_defaults(func=cmd_rules)

    for register in _extra_commands():
        register(sub)
    return parser


def _extra_commands() -> list[Callable[[Any], None]]:
    """Sub-commands defined in other modules (each module's ``register(sub)``)."""
    found = []
    for module_name in ("arena.author", "arena.tournament.cli", "arena.web.cli", "arena.verify.cli"):
        try:
            module = __import__(module_name, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        found.append(module.register)
    return found


def _safe_streams() -> None:
    """Text no terminal encoding can hold (a lone surrogate in some name) is printed as an
    escape, never an encoding error after the games are played."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass


def main(argv: Sequence[str] | None = None) -> int:
    _safe_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with sigterm_as_ctrl_c():
            return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"arena: error: {escape(exc, 600)}", file=sys.stderr)
        return 2
    except BotLoadError as exc:
        print(f"arena: error: {escape(exc, 600)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"arena: {signal_word(getattr(exc, 'signum', 2))}", file=sys.stderr)
        return exit_status(exc)
    except BrokenPipeError:
        if not stdout_closed():
            print("arena: error: a pipe to a helper process broke", file=sys.stderr)
            return 1
        quiet_stdout()  # the reader of our output has gone (`| head`): not an error, nothing more to say
        return SIGPIPE_STATUS


if __name__ == "__main__":
    raise SystemExit(main())
