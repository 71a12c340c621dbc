"""Options shared by commands: argparse types, the rules options (-> :class:`~arena.game.rules.Rules`),
the sandbox's time limits (-> :class:`~arena.sandbox.limits.Limits`) and the trust options of
commands that re-play a database's bots."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ..errors import UsageError
from ..game.rules import Rules, parse_setting
from ..sandbox.limits import Limits


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports a bad command line as one line (plus a hint), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


# -- argparse types -------------------------------------------------------------


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


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text[:40]!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, not {value}")
    return value


def at_most(limit: int) -> Callable[[str], int]:
    """An argparse type: a whole number from 1 to ``limit`` (larger ones would only run for days)."""

    def parse(text: str) -> int:
        value = positive(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"at most {limit:,}, not {value:,}")
        return value

    parse.__name__ = "count"  # argparse names the type in its messages
    return parse


# -- rules ------------------------------------------------------------------------


def check_ray_backend(backend: str, address: str | None) -> None:
    """``--backend ray`` needs Ray, and ``--ray-address`` needs ``--backend ray`` and something
    answering there: checked in seconds, before any database or server (``ray.init`` retries for minutes).

    :raises UsageError: in one line.
    """
    if address and backend != "ray":
        raise UsageError("--ray-address goes with --backend ray")
    if backend != "ray":
        return
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError("the ray backend needs Ray: pip install 'yard-bridge-arena[ray]'") from None
    if address:
        from ..tournament.backends.local import HarnessError
        from ..tournament.backends.ray_tasks import probe

        try:
            probe(address)
        except HarnessError as exc:
            raise UsageError(str(exc)) from None


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
    return make_rules(args.variant, args.rule)


def make_rules(variant: str, settings: Sequence[str]) -> Rules:
    """The rules of ``variant`` with each ``KEY=VALUE`` of ``settings`` changed. :raises UsageError:."""
    from ..plugins import variants

    known = variants()
    if variant not in known:
        raise UsageError(f"unknown variant {variant!r}; known: {', '.join(sorted(known))}")
    rules = known[variant]
    changes: dict[str, Any] = {}
    for text in settings:
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


# -- limits -----------------------------------------------------------------------


def add_limit_options(p: argparse.ArgumentParser) -> None:
    """``--move-time`` and ``--game-time``: the CPU-time limits of sandboxed bots."""
    p.add_argument(
        "--move-time",
        dest="move_seconds",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="CPU time a sandboxed bot may use per move (default 1)",
    )
    p.add_argument(
        "--game-time",
        dest="game_seconds",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="CPU time a sandboxed bot may use per game (default 30)",
    )


def limits_from_args(args: argparse.Namespace) -> Limits:
    """The sandbox :class:`~arena.sandbox.limits.Limits` the options ask for (the defaults when none)."""
    changes = {}
    for name in ("move_seconds", "game_seconds"):  # Limits' own names (--move-time, --game-time)
        if getattr(args, name, None) is not None:
            changes[name] = getattr(args, name)
    limits = Limits(**changes)
    if limits.move_seconds > limits.game_seconds:
        raise UsageError(f"--move-time {limits.move_seconds:g} is more than the game's {limits.game_seconds:g} s")
    return limits


# -- trust ------------------------------------------------------------------------


def add_trust_options(p: argparse.ArgumentParser) -> None:
    """``--trusted`` and ``--allow-weak-sandbox`` for commands that re-play a database's games."""
    p.add_argument(
        "--trusted",
        action="store_true",
        help="run the database's bots in-process without the sandbox (only for code you trust: "
        "the database itself never makes a bot trusted)",
    )
    p.add_argument(
        "--allow-weak-sandbox",
        action="store_true",
        help="re-play bot files even when this machine's sandbox lacks some layers",
    )
