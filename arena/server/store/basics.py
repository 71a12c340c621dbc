"""What the contest database's modules share: one write transaction, an upload's stored bytes."""

from __future__ import annotations

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
