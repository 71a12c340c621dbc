"""A bot's versions as its author numbers them: ``v1``, ``v2``... (the n-th upload of that bot name,
which belongs to one author), never the submission's id, on every page, in the API and at the
tables; and an upload of the very bytes of a version of this round is that version, not a new one
(ruling 145)."""

from __future__ import annotations

import sqlite3


def label(version: object) -> str:
    """``v2``: how a version is named everywhere."""
    return f"v{version}"


def player(bot: str, version: object) -> str:
    """``annbot v2``: a version's name at a table (the games' records, the viewer)."""
    return f"{bot} {label(version)}"


class Identical(Exception):
    """An upload of the very bytes of a version of the bot uploaded in this round: no new version."""

    def __init__(self, submission: int, version: int, status: str) -> None:
        super().__init__(f"identical to {label(version)}: no new version was made")
        self.submission, self.version, self.status = submission, version, status


def refuse_identical(db: sqlite3.Connection, bot: str, sha256: str) -> None:
    """In the upload's transaction: refuse bytes ``bot`` has as a version of the current round (the
    latest round's first upload on: rounds count up). An earlier round's version uploaded again is a
    new version: it enters this round, checked under its rules.

    :raises Identical: there is one (the latest such)."""
    same = db.execute(
        "SELECT id, version, status FROM submissions WHERE bot = ? AND sha256 = ? AND "
        "id >= (SELECT COALESCE(MAX(first_submission), 0) FROM rounds) ORDER BY id DESC LIMIT 1",
        (bot, sha256),
    ).fetchone()
    if same is not None:
        raise Identical(int(same[0]), int(same[1]), str(same[2]))
