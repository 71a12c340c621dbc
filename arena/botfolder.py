"""A bot program's folder: its ``bot.toml`` and its files, read as untrusted input.

``bot.toml`` (parsed with :mod:`tomllib`) says::

    name = "mybot"                               # optional: the folder's name otherwise
    language = "cpp"                             # required: recorded as the bot's language
    run = "./bot"                                # required: the command, run in the folder
    build = "g++ -O2 -std=c++17 -o bot bot.cpp"  # optional: run once, before any game
    description = "..."                          # optional

Every file is read through :func:`~arena.untrusted.read_untrusted` (regular files only, no
links, bounded); names starting with ``.`` are skipped (``.git``). At most :data:`MAX_FILES`
files of :data:`MAX_FOLDER_BYTES` in all, :data:`MAX_DEPTH` folders deep.
"""

from __future__ import annotations

import os
import shlex
import tomllib
from pathlib import Path
from typing import Any

from .errors import BotLoadError
from .safetext import escape, storable
from .untrusted import NotRegularFile, read_untrusted

MANIFEST = "bot.toml"
MAX_FILES = 64
MAX_FOLDER_BYTES = 1024 * 1024
MAX_DEPTH = 4
_KEYS = {"name": str, "language": str, "run": str, "build": str, "description": str}


def is_bot_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is to be read as a bot program's folder: a folder itself (not a link to
    one), not named like a bot file (a folder ``x.py`` or ``x.js`` is refused where a file belongs)."""
    return os.path.isdir(path) and not os.path.islink(path) and not str(path).endswith((".py", ".js"))


def _files(root: str, single_link: bool = False) -> list[tuple[str, bytes]]:
    found: list[tuple[str, bytes]] = []
    total = 0

    def walk(folder: str, rel: str, depth: int) -> None:
        nonlocal total
        if depth > MAX_DEPTH:
            raise BotLoadError(f"folders nested deeper than {MAX_DEPTH}", path=storable(folder))
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.startswith("."):
                    continue
                name = f"{rel}{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, name + "/", depth + 1)
                    continue
                if len(found) >= MAX_FILES:
                    raise BotLoadError(f"more than {MAX_FILES} files", path=storable(root))
                try:
                    got = read_untrusted(entry.path, MAX_FOLDER_BYTES - total, single_link=single_link)
                except NotRegularFile as exc:
                    raise BotLoadError(exc.reason, path=exc.path) from None
                if got.too_large:
                    raise BotLoadError(f"the folder holds more than {MAX_FOLDER_BYTES} bytes", path=storable(root))
                total += len(got.data)
                found.append((name, got.data))

    walk(root, "", 0)
    return found


def parse_manifest(data: bytes, where: str) -> dict[str, str]:
    """bot.toml's fields, checked. :raises BotLoadError: one line saying what is wrong."""
    try:
        manifest: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BotLoadError(f"{MANIFEST}: {escape(str(exc), 200)}", path=where) from None
    for key, value in manifest.items():
        if key not in _KEYS:
            raise BotLoadError(f"{MANIFEST}: unknown key {escape(key, 40)!r} (known: {', '.join(_KEYS)})", path=where)
        if type(value) is not str or not value.strip() or len(value) > 1000:
            raise BotLoadError(f"{MANIFEST}: {key} must be a non-empty string of at most 1000 characters", path=where)
    for key in ("language", "run"):
        if key not in manifest:
            raise BotLoadError(f"{MANIFEST}: no {key!r}", path=where)
    for key in ("run", "build"):
        if key in manifest:
            try:
                shlex.split(manifest[key])
            except ValueError as exc:
                raise BotLoadError(f"{MANIFEST}: {key}: {exc}", path=where) from None
    return dict(manifest)


def read_bot_folder(
    path: str | os.PathLike[str], *, single_link: bool = False
) -> tuple[str, str, str, tuple[tuple[str, bytes], ...]]:
    """The bot program in folder ``path``: (name, bot.toml's text, description, files), for
    :func:`arena.loader.read_bot_file` to make its :class:`~arena.loader.BotSource` of.

    :raises BotLoadError: no bot.toml, a bad one, or a file that cannot be read (a link; a
        hard link too when ``single_link``: inside a submissions folder)."""
    where = storable(str(path))
    try:
        files = _files(str(path), single_link)
    except OSError as exc:
        raise BotLoadError(f"cannot read: {exc.strerror or exc}", path=where) from None
    manifest = dict(files).get(MANIFEST)
    if manifest is None:
        raise BotLoadError(f"a bot folder needs a {MANIFEST} (docs/protocol.md)", path=where)
    fields = parse_manifest(manifest, where)
    name = fields.get("name") or Path(path).name
    return name, manifest.decode("utf-8"), fields.get("description", ""), tuple(files)
