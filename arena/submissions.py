"""Submission manifests: what ``arena submit`` checked, and the tournament's check against them.

``arena submit`` stores a clean bot as ``DIR/<name>.py`` beside ``DIR/<name>.json``, its
manifest (name, author, sha256 of exactly the bytes that were checked, the check report).
A folder that holds a manifest is a *submissions folder*: a tournament plays a bot file
from it only when the file's manifest names it (``name``, ``file``) and its bytes still hash
to the manifest's ``sha256``, unless the organiser opts in (``--allow-unverified``). Bot
files in folders without manifests (an author's own local round) play as they are.

The tournament hashes the very bytes it then plays (:class:`~arena.loader.BotSource`
keeps them), so a file swapped after the check cannot slip in either.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .safetext import clean_name


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def submitted(folder: Path) -> dict[str, Path]:
    """sha256 -> stored bot file, for every bot in the submissions folder."""
    found: dict[str, Path] = {}
    for py in sorted(folder.glob("*.py")):
        try:
            found.setdefault(file_sha256(py), py)
        except OSError:
            continue
    return found


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all (a temporary file beside it, renamed)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


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
    """The manifest at ``path``; None when it is not one (unreadable, not JSON, fields missing)."""
    try:
        with open(path, "rb") as f:
            data: Any = json.loads(f.read(1 << 20).decode("utf-8"))
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
    whose ``<stem>.json`` is missing or damaged is refused like a changed one."""
    manifests: dict[str, Manifest | None] = {}
    try:
        jsons = sorted(p for p in folder.glob("*.json") if p.is_file())
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
    """Check each (bot file path or None for a registered bot, sha256 of the bytes to be played)."""
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
