"""The ``--replays`` folder: written only by the tournament it belongs to.

The first run that writes into a folder leaves a marker file in it
(:data:`MARKER`) naming its database (path, creation time and a random
tournament id stored in the database). A later run may write into the folder
only when it is new or empty, or when the marker names the very database the
run uses (a resumed tournament). Anything else - another tournament's records,
files of the user's own - is refused before the database is made, unless
``--force`` says to write there anyway.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ...trust.files import NotRegularFile, read_untrusted
from .database import TournamentDBError, open_readonly

#: The marker file in a replays folder.
MARKER = ".arena-replays.json"
FORMAT = "arena-replays"
_MARKER_BYTES = 64 * 1024


class RecordsFolderError(ValueError):
    """The replays folder belongs to something else."""


def identity(meta: dict[str, str], db_path: str | os.PathLike[str]) -> dict[str, Any]:
    """What ties a replays folder to a database: its tournament id (or creation time) and path."""
    return {
        "format": FORMAT,
        "db": str(Path(db_path).resolve()),
        "created": meta.get("created", ""),
        "tournament": meta.get("tournament_id", ""),
    }


def _same(marker: dict[str, Any], ident: dict[str, Any]) -> bool:
    return (
        marker.get("format") == FORMAT
        and marker.get("created") == ident["created"]
        and marker.get("tournament") == ident["tournament"]
    )


def _read_marker(folder: Path) -> dict[str, Any] | None:
    """The folder's marker, or None: missing, unreadable, not JSON, too long, or not a regular
    file (a FIFO there would block the tournament for ever; a link would name any file)."""
    try:
        got = read_untrusted(folder / MARKER, _MARKER_BYTES)
        data = json.loads(got.data.decode("utf-8")) if not got.too_large else None
    except (OSError, ValueError, NotRegularFile, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def check(folder: Path, db_path: str | os.PathLike[str], *, force: bool = False) -> None:
    """Refuse (before any database is made) a folder that holds what this tournament did not write.

    :raises RecordsFolderError: a file, a folder of other files, or another tournament's replays.
    """
    if folder.exists() and not folder.is_dir():
        raise RecordsFolderError(f"{folder}: not a folder; --replays takes a folder")
    if force or not folder.exists():
        return
    try:
        entries = [e.name for e in folder.iterdir()]
    except OSError as exc:
        raise RecordsFolderError(f"{folder}: cannot read the replays folder: {exc.strerror or exc}") from None
    if not entries:
        return
    hint = "choose another --replays folder, or add --force to write into it anyway"
    marker = _read_marker(folder) if MARKER in entries else None
    if marker is None:
        raise RecordsFolderError(
            f"{folder}: holds {len(entries)} file{'s' if len(entries) != 1 else ''} "
            f"that this tournament did not write; {hint}"
        )
    theirs = str(marker.get("db", "?"))
    try:
        conn, meta = open_readonly(db_path)
        conn.close()
    except TournamentDBError:
        raise RecordsFolderError(
            f"{folder}: holds the replays of the tournament in {theirs}, not of a new one in {db_path}; {hint}"
        ) from None
    if not _same(marker, identity(meta, db_path)):
        raise RecordsFolderError(
            f"{folder}: holds the replays of another tournament ({theirs}, created "
            f"{marker.get('created', '?')}); {hint}"
        )


def claim(folder: Path, meta: dict[str, str], db_path: str | os.PathLike[str]) -> None:
    """Make the folder if needed and mark it as this tournament's. :raises OSError:."""
    folder.mkdir(parents=True, exist_ok=True)
    ident = identity(meta, db_path)
    marker = _read_marker(folder)
    if marker is not None and _same(marker, ident):
        return
    tmp = folder / f".{MARKER}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(ident, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, folder / MARKER)
