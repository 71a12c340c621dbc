"""What the contest database's modules share: one write transaction, an upload's stored bytes, a game
row's faults read back."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def writing(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction (``BEGIN IMMEDIATE``: writers queue, readers go on), committed whole or not at all."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def source_bytes(value: Any) -> bytes:
    """An upload's stored bytes; text or a number (an edited database keeps any type) as its UTF-8."""
    if isinstance(value, bytes):
        return value
    return b"" if value is None else str(value).encode("utf-8", "surrogatepass")


def stored_faults(text: Any) -> list[tuple[int, str, str, int]]:
    """A game row's faults as (seat, kind, detail, round); entries of another shape are left out."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return []
    shape = (int, str, str, int)
    return [
        (f[0], f[1], f[2], f[3])
        for f in (data if isinstance(data, list) else [])
        if isinstance(f, list) and len(f) == 4 and all(isinstance(v, t) for v, t in zip(f, shape, strict=True))
    ]


def stored_ints(text: Any) -> list[int]:
    """A stored JSON list of integers (places, scores); [] for anything else."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return []
    return [v for v in data if type(v) is int] if isinstance(data, list) else []
