"""A final's line-up and start (:mod:`.final` keeps its state): who may enter round N's final
(:func:`pool`: every approved, clean active version of the rounds so far and the house bots playing),
whom the organiser's settings enter (:func:`entrants`), and whether it may start or resume now
(:func:`can_start`, :func:`begin`: checked and marked in one transaction)."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from ..store import database as store
from . import rounds
from .final import ORDINAL, ROUNDS, FinalSettings, current_state, home, key, set_state, settings_of, state

#: The round of a submission ``s``: the last round opened at or before it.
ROUND_OF = "(SELECT COALESCE(MAX(number), 1) FROM rounds WHERE first_submission <= s.id)"


@dataclass(frozen=True)
class Entry:
    """An entrant of a final: a stored version (or a registered house bot, played by its name)."""

    label: str
    submission: int
    bot: str
    version: int
    author: str | None  # None: a house bot
    house: str | None  # "registered", "file" or None
    round: int  # the round it was uploaded in


def pool(db: sqlite3.Connection, number: int) -> list[Entry]:
    """Round ``number``'s final's possible entrants: every approved, clean active version of the
    rounds up to it (round one's as round two opened, and round two's field and new versions), then
    the house bots playing now. A bot with two such versions enters both, labelled ``NAME.vN``."""
    ids: list[int] = []
    for n in range(1, number + 1):
        ids += [s for s in rounds.members(db, n) if s not in ids]
    rows = db.execute(
        "SELECT s.id, s.bot, CAST(s.version AS INTEGER) AS version, a.name AS author, b.house, "
        f"{ROUND_OF} AS round FROM submissions s JOIN authors a ON a.id = s.author LEFT JOIN bots b ON b.name = s.bot "
        "WHERE s.id IN (SELECT value FROM json_each(?)) AND s.status = 'clean' AND "
        "(s.review = 'approved' OR b.house IS NOT NULL) ORDER BY (b.house IS NOT NULL), s.bot, s.id",
        (json.dumps(ids),),
    ).fetchall()
    from .house import playing

    authors = [r for r in rows if r["house"] is None]
    house = [r for r in rows if r["house"] is not None and int(r["id"]) in playing(db)]
    twice = {r["bot"] for r in authors if sum(1 for o in authors if o["bot"] == r["bot"]) > 1}
    out = []
    for r in [*authors, *house]:
        label = f"{r['bot']}.v{r['version']}" if r["bot"] in twice else str(r["bot"])
        out.append(
            Entry(
                label,
                int(r["id"]),
                str(r["bot"]),
                int(r["version"]),
                None if r["house"] else str(r["author"]),
                str(r["house"]) if r["house"] else None,
                int(r["round"]),
            )
        )
    return out


def entrants(db: sqlite3.Connection, number: int, settings: FinalSettings) -> list[Entry]:
    """The final's entrants under ``settings`` (its choice among :func:`pool`, house bots or not).

    :raises store.ContestError: a chosen label that is no possible entrant."""
    found = pool(db, number)
    if settings.entrants is not None:
        labels = {e.label for e in found}
        unknown = [x for x in settings.entrants if x not in labels]
        if unknown:
            raise store.ContestError(
                f"{', '.join(unknown)[:200]}: no entrant of round {number}'s final "
                f"(possible: {', '.join(sorted(labels))[:400]})"
            )
        found = [e for e in found if e.label in settings.entrants]
    return [e for e in found if settings.house or e.house is None]


def can_start(db: sqlite3.Connection, number: int, settings: FinalSettings | None = None) -> str | None:
    """Why round ``number``'s final cannot start (or resume) now, with ``settings`` (None: the
    stored ones, else the defaults); None when it can."""
    now = rounds.current_number(db)
    word = ORDINAL.get(number, str(number))
    if number not in ROUNDS or number > now:
        return f"there is no round {number} to hold a final of (the contest is in round {now})"
    data, at = state(db, number), current_state(db, number)
    if number < now:
        if at == "published":
            return f"round {ORDINAL.get(now, now)} is open: the round-{word} final is kept as it was run"
        return f"round {ORDINAL.get(now, now)} is open: round {word} has no final (round two opened without one)"
    if at == "running":
        return f"the round-{word} final is running"
    if at == "published":
        return f"the round-{word} final is published; it is kept as it was run"
    stored = settings_of(data)
    if stored is not None and settings is not None and stored != settings:
        return (
            f"the round-{word} final was begun with other settings ({stored.described()}); run it again with "
            f"those (it resumes), or move {home(Path('DIR'), number)} away and clear it with --restart"
        )
    try:
        chosen = entrants(db, number, settings or stored or FinalSettings())
    except store.ContestError as exc:
        return str(exc)
    if store.setting(db, "frozen") != "1":
        return "freeze submissions first (Freeze on the desk, or --freeze): the final plays the frozen versions"
    if len(chosen) < 2:
        return f"the final needs at least two entrants; round {word} has {len(chosen)} approved active versions"
    return None


class _Refused(Exception):
    """Why a final cannot begin, raised inside its transaction so that nothing of it is kept."""


def begin(
    db: sqlite3.Connection, number: int, settings: FinalSettings | None, pid: int | None = None, freeze: bool = False
) -> tuple[str | None, FinalSettings]:
    """Mark round ``number``'s final running (checked and marked in one transaction: one final at a
    time), freezing submissions first with ``freeze`` (only if it begins); returns why it cannot
    (None when it began) and the settings it runs with (the stored ones when it resumes)."""
    chosen = settings or FinalSettings()
    try:
        with store.writing(db):
            if freeze:
                db.execute("INSERT OR REPLACE INTO contest VALUES ('frozen', '1')")
            why = can_start(db, number, settings)
            chosen = settings or settings_of(state(db, number)) or FinalSettings()
            if why is not None:
                raise _Refused(why)
            data = {**state(db, number), "state": "running", "settings": chosen.to_dict(), "since": time.time()}
            data["pid"] = pid
            data.pop("detail", None)
            db.execute("INSERT OR REPLACE INTO contest VALUES (?, ?)", (key(number), json.dumps(data)))
    except _Refused as refused:
        return str(refused), chosen
    return None, chosen


def restart(db: sqlite3.Connection, folder: Path, number: int) -> str | None:
    """Forget an unpublished final (its settings too), once its folder was moved away; why not, or None."""
    at = current_state(db, number)
    if at in ("running", "published"):
        return f"the round-{ORDINAL.get(number, number)} final is {at}: it is not cleared"
    if home(folder, number).exists():
        return f"{home(folder, number)} exists: move it away first (nothing recorded is deleted)"
    set_state(db, number)
    return None
