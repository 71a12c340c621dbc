"""``arena new``: write a working, commented bot file to start from (never over a file)."""

from __future__ import annotations

import argparse
from typing import Any

from ..author import bot_target, render_template
from ..errors import UsageError
from ..safetext import escape


def run(args: argparse.Namespace) -> int:
    name, path = bot_target(args.name)
    if path.exists():
        raise UsageError(f"{path} already exists; choose another name or move that file away")
    if not path.parent.is_dir():
        raise UsageError(f"{path.parent}: no such folder")
    source = render_template(name, str(path))
    try:
        with open(path, "x", encoding="utf-8") as f:
            f.write(source)
    except FileExistsError:
        raise UsageError(f"{path} already exists; choose another name or move that file away") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror}") from None
    shown = escape(path)
    print(f"wrote {shown}: a working bot named {escape(repr(name))}. Next:")
    print(f"  arena play human {shown}     play a game against it")
    print(f"  arena play {shown} greedy    100 games against a reference bot")
    print(f"  arena check {shown}          check it as the organiser will")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "new",
        help="write a new bot file to start from",
        description="Write NAME.py (or the given .py path): a working, commented bot that "
        "passes `arena check`. Never overwrites a file.",
    )
    p.add_argument("name", metavar="NAME", help="bot name (letters, digits, - and _), or a path ending in .py")
    p.set_defaults(func=run)
