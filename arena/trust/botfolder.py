"""A bot program's folder: its ``bot.toml`` and its files, read as untrusted input.

``bot.toml`` (parsed with :mod:`tomllib`) says::

    name = "mybot"                               # optional: the folder's name otherwise
    language = "cpp"                             # required: recorded as the bot's language
    run = "./bot"                                # required: the command, run in the folder
    build = "g++ -O2 -std=c++17 -o bot bot.cpp"  # optional: run once, before any game
    description = "..."                          # optional

Every file is read through :func:`~arena.trust.files.read_tree` (regular files only, opened
beneath the folder's descriptor with no link followed at any depth, bounded as it reads);
names starting with ``.`` are skipped (``.git``). At most :data:`MAX_FILES`
files of :data:`MAX_FOLDER_BYTES` in all, :data:`MAX_DEPTH` folders deep.
"""

from __future__ import annotations

import base64
import binascii
import errno
import json
import os
import posixpath
import shlex
import tomllib
from pathlib import Path
from typing import Any

from ..errors import BotLoadError
from .files import NotRegularFile, TooMuch, TreeLimits, read_tree
from .text import escape, storable

MANIFEST = "bot.toml"
MAX_FILES = 64
#: A folder's files in all: its bundle (below) must fit a database's source (256 KiB).
MAX_FOLDER_BYTES = 240 * 1024
MAX_DEPTH = 4
_LIMITS = TreeLimits(files=MAX_FILES, bytes=MAX_FOLDER_BYTES, depth=MAX_DEPTH, entries=4096)
#: A bot program's *source*, as stored and hashed (its sha256 is the bot's): this line, then
#: one JSON object ``{"runtime": "node"|"program", "files": [[path, "text"|"base64", content]]}``.
BUNDLE_MAGIC = "#arena-program 1\n"
BUNDLE_RUNTIMES = ("node", "program")
_KEYS = {"name": str, "language": str, "run": str, "build": str, "description": str}


def is_bot_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is to be read as a bot program's folder: a folder itself (not a link to
    one), not named like a bot file (a folder ``x.py`` or ``x.js`` is refused where a file belongs)."""
    return os.path.isdir(path) and not os.path.islink(path) and not str(path).endswith((".py", ".js"))


def _files(root: str, single_link: bool = False) -> list[tuple[str, bytes]]:
    """The folder's files, read beneath its descriptor (:func:`~arena.trust.files.read_tree`):
    no link followed at any depth, even one swapped in while it is read."""
    where = storable(root)
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BotLoadError("a symbolic link, not a bot folder", path=where) from None
        raise
    try:
        return read_tree(fd, _LIMITS, others="refuse", skip_hidden=True, single_link=single_link)
    except NotRegularFile as exc:
        raise BotLoadError(exc.reason, path=storable(os.path.join(root, exc.path))) from None
    except TooMuch as exc:
        if exc.what == "bytes":
            raise BotLoadError(f"the folder holds more than {MAX_FOLDER_BYTES} bytes", path=where) from None
        raise BotLoadError(str(exc), path=where) from None
    finally:
        os.close(fd)


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
    :func:`arena.trust.botsource.read_bot_file` to make its :class:`~arena.trust.botsource.BotSource` of.

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


def safe_relative(name: Any) -> bool:
    """Whether ``name`` is a plain relative path inside a folder (no ``..``, no absolute path, no
    empty or hidden part, no control character): the only names a bundle may hold."""
    if type(name) is not str or not name or len(name) > 200 or name.startswith("/"):
        return False
    parts = name.split("/")
    return posixpath.normpath(name) == name and all(p and not p.startswith(".") and p.isprintable() for p in parts)


def bundle(runtime: str, files: tuple[tuple[str, bytes], ...]) -> str:
    """A program's source: its runtime and files, as one text (:data:`BUNDLE_MAGIC`)."""
    listed = []
    for name, data in files:
        try:
            listed.append([name, "text", data.decode("utf-8")])
        except UnicodeDecodeError:
            listed.append([name, "base64", base64.b64encode(data).decode("ascii")])
    return BUNDLE_MAGIC + json.dumps({"runtime": runtime, "files": listed}, ensure_ascii=False, sort_keys=True)


def unbundle(text: str, where: str) -> tuple[str, tuple[tuple[str, bytes], ...]]:
    """(runtime, files) of a bundle; it may come from a hostile database, so every part is checked.

    :raises BotLoadError: not a bundle, or one that breaks any rule of :func:`bundle`'s output."""

    def bad(why: str) -> BotLoadError:
        return BotLoadError(f"not a bot program's stored source: {why}", path=where)

    if not text.startswith(BUNDLE_MAGIC):
        raise bad("no header")
    try:
        data = json.loads(text[len(BUNDLE_MAGIC) :])
    except (ValueError, RecursionError):
        raise bad("not JSON") from None
    if type(data) is not dict or set(data) != {"runtime", "files"} or data["runtime"] not in BUNDLE_RUNTIMES:
        raise bad("wrong fields or runtime")
    files = data["files"]
    if type(files) is not list or not 0 < len(files) <= MAX_FILES:
        raise bad("no files, or too many")
    out: list[tuple[str, bytes]] = []
    for entry in files:
        if (
            type(entry) is not list
            or len(entry) != 3
            or entry[1] not in ("text", "base64")
            or type(entry[2]) is not str
        ):
            raise bad("a malformed file entry")
        name, how, content = entry
        if not safe_relative(name):
            raise bad(f"a file name that is not a plain relative path ({escape(str(name), 60)!r})")
        try:
            raw = content.encode("utf-8") if how == "text" else base64.b64decode(content, validate=True)
        except (UnicodeEncodeError, binascii.Error):
            raise bad(f"undecodable content of {escape(name, 60)!r}") from None
        out.append((name, raw))
    names = [n for n, _ in out]
    if len(set(names)) != len(names) or names != sorted(names):
        raise bad("file names repeated or out of order")
    if data["runtime"] == "program" and MANIFEST not in names:
        raise bad(f"no {MANIFEST}")
    return data["runtime"], tuple(out)
