"""``arena rules``: the rules in force, or the list of variants."""

from __future__ import annotations

import argparse
from typing import Any

from ..trust.text import escape, to_json
from .options import add_rules_options, rules_from_args


def run(args: argparse.Namespace) -> int:
    from ..game.explain import describe_rules
    from ..plugins import variants

    if args.list:
        found = sorted(variants().items())
        if args.json:
            print(to_json({name: rules.changed() for name, rules in found}))
            return 0
        for name, rules in found:
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


def register(sub: Any) -> None:
    p = sub.add_parser(
        "rules",
        help="print the rules in force",
        description="Print the rules in force: the contest defaults and any knobs changed.",
    )
    p.add_argument("--list", action="store_true", help="list the rule variants (with --json: each one's changes)")
    p.add_argument("--json", action="store_true", help="the settings as JSON")
    add_rules_options(p)
    p.set_defaults(func=run)
