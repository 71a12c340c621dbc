"""``arena check``: check a bot as the organiser will (sandboxed load, smoke games)."""

from __future__ import annotations

import argparse
from typing import Any

from ..authoring.check import CheckSettings, run_check
from ..trust.text import escape, to_json
from .options import add_limit_options, add_rules_options, limits_from_args, parse_seed, positive, rules_from_args


def add_check_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", "-n", type=positive, default=2, help="smoke games per table size (default 2)")
    p.add_argument("--seed", type=parse_seed, default=0, help="seed of the smoke games (default 0)")
    add_limit_options(p)
    add_rules_options(p)


def check_settings(args: argparse.Namespace) -> CheckSettings:
    return CheckSettings(rules=rules_from_args(args), games=args.games, seed=args.seed, limits=limits_from_args(args))


def run(args: argparse.Namespace) -> int:
    report = run_check(args.bot, check_settings(args))
    if args.json:
        print(to_json(report.to_dict()))
    else:
        for line in report.lines():
            print(escape(line))
    return 0 if report.clean else 1


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="check a bot as the organiser will: load it sandboxed, play smoke games",
        description="Load a bot file exactly as a tournament does (sandboxed), report problems "
        "with file and line, then play smoke games against the reference bots at "
        "2, 3, 4 and 6 players and report faults and time per move. "
        "Exit status 0 only when the bot is clean.",
    )
    p.add_argument("bot", metavar="BOT", help="the bot: a .py or .js file, or a folder with a bot.toml")
    p.add_argument("--json", action="store_true", help="the report as JSON")
    add_check_options(p)
    p.set_defaults(func=run)
