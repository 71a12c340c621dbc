"""``arena new``: write a working, commented bot (or a starter kit for another language) to
start from; never over a file or folder."""

from __future__ import annotations

import argparse
import os
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from ..authoring.check import bot_target, render_template
from ..errors import UsageError
from ..trust.text import escape

#: ``--lang`` -> the kit's folder in arena/authoring/kits (None: the Python bot-API file).
LANGS: dict[str, str | None] = {"python": None, "python-stdio": "python-stdio", "js": "js", "cpp": "cpp"}


def _kit_files(kit: str, name: str) -> dict[str, str]:
    folder = resources.files("arena.authoring").joinpath("kits", kit)
    return {
        entry.name: entry.read_text(encoding="utf-8").replace('"NAME"', f'"{name}"').replace("NAME:", f"{name}:")
        for entry in folder.iterdir()
        if entry.is_file()
    }


def _write(path: Path, text: str) -> None:
    try:
        with open(path, "x", encoding="utf-8") as f:
            f.write(text)
    except FileExistsError:
        raise UsageError(f"{path} already exists; choose another name or move that file away") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror}") from None


def run(args: argparse.Namespace) -> int:
    lang = args.lang
    text = args.name.removesuffix(".js") if lang == "js" else args.name
    name, path = bot_target(text)
    kit = LANGS[lang]
    if kit is not None:
        path = path.with_suffix(".js") if lang == "js" else path.with_suffix("")
    if path.exists():
        what = "folder" if path.is_dir() else "file"
        raise UsageError(f"{path} already exists; choose another name or move that {what} away")
    if not path.parent.is_dir():
        raise UsageError(f"{path.parent}: no such folder")
    if kit is None:
        _write(path, render_template(name, str(path)))
    elif lang == "js":
        _write(path, _kit_files(kit, name)["bot.js"])
    else:
        try:
            os.mkdir(path)
        except OSError as exc:
            raise UsageError(f"{path}: cannot make the folder: {exc.strerror}") from None
        try:
            for file, content in sorted(_kit_files(kit, name).items()):
                _write(path / file, content)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)  # no half-written kit left behind (the folder is ours)
            raise
    shown = escape(path)
    what = "a working bot" if kit is None else f"a working {lang} starter kit (docs/protocol.md)"
    print(f"wrote {shown}: {what} named {escape(repr(name))}. Next:")
    print(f"  arena play human {shown}     play a game against it")
    print(f"  arena play {shown} greedy    100 games against a reference bot")
    print(f"  arena check {shown}          check it as the organiser will")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "new",
        help="write a new bot file (or starter kit) to start from",
        description="Write NAME.py (or the given .py path): a working, commented bot that "
        "passes `arena check`; with --lang js, NAME.js (protocol v1); with --lang python-stdio or "
        "cpp, a folder NAME/ with its bot.toml. Never overwrites a file.",
    )
    p.add_argument("name", metavar="NAME", help="bot name (letters, digits, - and _), or a path ending in .py")
    p.add_argument(
        "--lang", choices=sorted(LANGS), default="python", help="the bot's language (default: python, the bot API)"
    )
    p.set_defaults(func=run)
