"""Submission manifests: what ``arena submit`` checked, and the tournament's check against them.

``arena submit`` stores a clean bot as ``DIR/<name>.py`` beside ``DIR/<name>.json``, its
manifest (name, author, sha256 of exactly the bytes that were checked, the check report).
A folder that holds a manifest is a *submissions folder*: a tournament plays a bot file
from it only when the file's manifest names it (``name``, ``file``) and its bytes still hash
to the manifest's ``sha256``, unless the organiser opts in (``--allow-unverified``). Bot
files in folders without manifests (an author's own local round) play as they are.

The tournament hashes the very bytes it then plays (:class:`~arena.trust.botsource.BotSource`
keeps them), so a file swapped after the check cannot slip in either.

A submissions folder is untrusted input: every file in it is read through
:func:`~arena.trust.files.read_untrusted` with ``single_link``, so a symbolic link, a hard
link, a FIFO, a device or a folder where a bot file or a manifest belongs is refused in one
line naming it (:class:`~arena.trust.files.NotRegularFile`), never followed and never waited on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..trust.botsource import MAX_SOURCE_BYTES
from ..trust.files import NotRegularFile, read_untrusted
from ..trust.text import clean_name

#: Longest manifest read (``arena submit`` writes a few KiB).
MAX_MANIFEST_BYTES = 1 << 20


def file_sha256(path: Path) -> str:
    """sha256 of a stored bot file (of its first ``MAX_SOURCE_BYTES + 1`` bytes: a longer file
    is no submission). :raises NotRegularFile:, :raises OSError:."""
    return hashlib.sha256(read_untrusted(path, MAX_SOURCE_BYTES, single_link=True).data).hexdigest()


def submitted(folder: Path) -> dict[str, Path]:
    """sha256 -> stored bot file, for every bot in the submissions folder (files that are not
    regular files of their own are no stored bots: skipped, never waited on)."""
    found: dict[str, Path] = {}
    for py in sorted([*folder.glob("*.py"), *folder.glob("*.js")]):
        try:
            found.setdefault(file_sha256(py), py)
        except (OSError, NotRegularFile):
            continue
    from ..errors import BotLoadError  # noqa: PLC0415
    from ..trust.botsource import read_bot_file  # noqa: PLC0415 - only for folders that hold bot programs

    for sub in sorted(folder.glob("*/bot.toml")):
        if sub.parent.is_symlink():
            continue
        try:
            found.setdefault(read_bot_file(sub.parent).sha256, sub.parent)
        except (OSError, BotLoadError):
            continue
    return found


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a new temporary file beside it (``O_EXCL``: never one
    that was there, nor a link planted under its name), renamed over ``path``; on failure
    the temporary file is removed."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


#: Fields every manifest has (``arena submit`` writes more).
REQUIRED = ("name", "file", "sha256")


@dataclass(frozen=True)
class Manifest:
    """The fields of a submission manifest the tournament uses."""

    path: Path
    name: str
    file: str
    sha256: str
    author: str | None


def read_manifest(path: Path) -> Manifest | None:
    """The manifest at ``path``; None when it is not one (unreadable, too long, not JSON,
    fields missing). :raises NotRegularFile: not a regular file of its own."""
    try:
        got = read_untrusted(path, MAX_MANIFEST_BYTES, single_link=True)
        if got.too_large:
            return None
        data: Any = json.loads(got.data.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in REQUIRED):
        return None
    author = data.get("author")
    shown = clean_name(author, "", 60) if isinstance(author, str) else ""  # a contestant's text: printable
    return Manifest(path, data["name"], data["file"], data["sha256"], shown or None)


@dataclass
class Folder:
    """A folder's manifests: ``submissions`` when it is a submissions folder."""

    submissions: bool
    manifests: dict[str, Manifest | None]  # by the .json file's stem; None: there but not a manifest


def scan(folder: Path) -> Folder:
    """A folder is a submissions folder when it holds at least one manifest; then a bot file
    whose ``<stem>.json`` is missing or damaged is refused like a changed one.

    :raises NotRegularFile: a ``*.json`` that is not a regular file of its own (a symbolic
        or hard link, a FIFO, a device, a folder): refused, whatever ``--allow-unverified`` says.
    """
    manifests: dict[str, Manifest | None] = {}
    try:
        jsons = sorted(folder.glob("*.json"))
    except OSError:
        return Folder(False, {})
    for path in jsons:
        manifests[path.stem] = read_manifest(path)
    return Folder(any(m is not None for m in manifests.values()), manifests)


def problem(path: Path, sha256: str, folder: Folder) -> str | None:
    """Why the bot file at ``path`` (whose bytes hash to ``sha256``) does not match its
    submission; None when it does."""
    if path.stem not in folder.manifests:
        return "no manifest"
    m = folder.manifests[path.stem]
    if m is None:
        return "damaged manifest"
    if m.file != path.name or m.name != path.stem:
        return f"manifest of {clean_name(m.file, '?', 40)}"
    if m.sha256 != sha256:
        return "changed since submission"
    return None


@dataclass
class Verification:
    """The outcome over a tournament's bot files, in entrant order."""

    authors: list[str | None]
    refused: list[str]  # "alice.py (changed since submission ...)", one per bad file
    verified: int = 0


def verify(paths: Sequence[tuple[str | None, str]]) -> Verification:
    """Check each (bot file path or None for a registered bot, sha256 of the bytes to be played).

    :raises NotRegularFile: a manifest that is not a regular file of its own (see :func:`scan`).
    """
    folders: dict[Path, Folder] = {}
    out = Verification([], [])
    for path_text, sha in paths:
        author = None
        if path_text is not None:
            path = Path(path_text)
            parent = path.resolve().parent
            if parent not in folders:
                folders[parent] = scan(parent)
            folder = folders[parent]
            if folder.submissions:
                why = problem(path, sha, folder)
                if why is None:
                    out.verified += 1
                    m = folder.manifests[path.stem]
                    author = m.author if m else None
                else:
                    out.refused.append(f"{path_text} ({why})")
        out.authors.append(author)
    return out


def refusal(refused: Sequence[str], limit: int = 6) -> str:
    """One line naming the files that do not match their submission."""
    shown = "; ".join(refused[:limit]) + (f"; and {len(refused) - limit} more" if len(refused) > limit else "")
    n = len(refused)
    return (
        f"{n} bot file{'s' if n != 1 else ''} in a submissions folder "
        f"{'do' if n != 1 else 'does'} not match {'their' if n != 1 else 'its'} submission: {shown}; "
        f"re-submit {'them' if n != 1 else 'it'} with `arena submit`, or add --allow-unverified to play "
        f"{'them' if n != 1 else 'it'} as {'they are' if n != 1 else 'it is'}"
    )
