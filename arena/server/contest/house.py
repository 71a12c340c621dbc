"""House bots: the organiser's own AI, entrants of the ladder beside the authors' bots (issue 29).

The announcement's round one is "authors' bots against the organiser's own AI". A house bot is a
bot of the contest owned by the house (an author row no token signs in as, :data:`HOUSE_AUTHOR`),
marked in ``bots.house`` (schema 3; ``off:KIND`` once removed):

* ``registered``: a bot arena has registered (``random``, the 2012 demo AI's play, or
  ``heuristic``...), played in the ladder's process by its installed code, by name: the bytes kept
  in its version are a record of what was added, never run;
* ``file``: a bot file the organiser named (``examples/demo2012.js``, the listing itself), stored and
  checked like an upload and played sandboxed like one.

A house bot is rated like every bot, in every round it plays; a table always seats an author's bot
beside it (house bots alone never play: :func:`arena.server.ladder.matchmaker.pick_table`); it is
never picked for round two's field and plays there beside the field; it is marked wherever bots
are listed. Removing one takes it off the ladder (``bots.active`` is cleared; its games and ratings
stay, and it stays marked); adding it again brings it back. Docs/RULINGS.md 135.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from ...authoring.check import NAME_PATTERN
from ...errors import BotLoadError
from ..store import database as store
from ..store.authors import HOUSE_AUTHOR as HOUSE_AUTHOR

#: ``bots.house`` of a house bot taken off the ladder starts with this (its kind follows).
OFF = "off:"
#: The house bots a contest starts with: the 2012 demo AI's play (a random puttable card, else a
#: draw: ``random``) and the reference heuristic.
DEFAULT_HOUSE = ("random", "heuristic")


@dataclass(frozen=True)
class HouseBot:
    name: str
    kind: str  # "registered" or "file"
    playing: bool  # in the house set (a file's version plays once its check is clean)
    submission: int | None  # its active version (None: removed, or a file not checked clean yet)
    status: str  # its newest version's check: clean, queued, checking, failed


def house_author(db: sqlite3.Connection) -> int:
    """The house's author id (made on first use, in the caller's transaction): no token signs in as it."""
    row = db.execute("SELECT id FROM authors WHERE name = ?", (HOUSE_AUTHOR,)).fetchone()
    if row is not None:
        return int(row[0])
    cur = db.execute(
        "INSERT INTO authors (name, token_hash, created, disabled) VALUES (?, '', ?, ?)",
        (HOUSE_AUTHOR, time.time(), time.time()),
    )
    return int(cur.lastrowid or 0)


def is_file(spec: str) -> bool:
    return spec.endswith((".py", ".js")) or "/" in spec


def registered_names() -> list[str]:
    from ...seats.loader import registry

    return sorted(registry())


def parse(text: str, option: str = "--house") -> list[str]:
    """``random,heuristic`` (the command line's ``option``) -> the names and bot files it lists;
    ``""`` or ``none``: none.

    :raises store.ContestError: an unknown name, or a name twice."""
    specs = [s.strip() for s in text.split(",") if s.strip()]
    if specs == ["none"]:
        return []
    known = registered_names()
    for spec in specs:
        if not is_file(spec) and spec not in known:
            raise store.ContestError(
                f"{option} {spec[:60]!r}: no registered bot of that name (registered: {', '.join(known)}; "
                "or name a bot file, e.g. examples/demo2012.js)"
            )
    if len(set(specs)) != len(specs):
        raise store.ContestError(f"{option} {text[:100]!r} names a bot twice")
    return specs


def _file_bot(path: str, option: str) -> tuple[str, bytes]:
    """A bot file's contest name and the bytes stored for it (as an upload of that file is stored).

    :raises store.ContestError: unreadable, or no usable name."""
    from ...trust.botsource import describe, read_bot_bytes
    from .uploads import as_stored

    try:
        data = as_stored(read_bot_bytes(path), path)
    except BotLoadError as exc:
        raise store.ContestError(f"{option} {path}: {exc.message}") from None
    name = None if path.endswith(".js") else describe(data.decode("utf-8", "replace"))[0]
    name = name or Path(path).stem
    if not NAME_PATTERN.fullmatch(name):
        raise store.ContestError(f"{option} {path}: its name {name[:60]!r} is not letters, digits, - or _")
    return name, data


def add(db: sqlite3.Connection, specs: list[str], option: str = "--house") -> list[str]:
    """Put each of ``specs`` (registered names, bot files) in the house, playing; returns their
    contest names. A registered one is clean at once (arena's own code); a file waits for its check
    like an upload. One transaction for all.

    :raises store.ContestError: an unknown name, a file that cannot be read, or a name an author's bot has.
    """
    from ...seats.loader import registry
    from ...trust.numbers import whole_number
    from ..ladder.rating import START_MU, START_SIGMA

    made: list[tuple[str, str, bytes]] = []
    known = registry()
    for spec in specs:
        if is_file(spec):
            name, data = _file_bot(spec, option)
            made.append((name, "file", data))
        elif spec in known:
            made.append((spec, "registered", Path(known[spec]).read_bytes()))
        else:
            raise store.ContestError(f"no registered bot named {spec[:60]!r} (registered: {', '.join(sorted(known))})")
    names = []
    with store.writing(db):
        house = house_author(db)
        rnd = whole_number(store.setting(db, "round"), 1, 99_999, given="text") or 1  # rounds.current_number
        for name, kind, data in made:
            row = db.execute("SELECT author FROM bots WHERE lower(name) = lower(?)", (name,)).fetchone()
            if row is not None and int(row["author"]) != house:
                who = store.author_name(db, int(row["author"]))
                raise store.ContestError(f"the bot name {name!r} belongs to {who}'s bot; it cannot be a house bot")
            if row is None:
                db.execute("INSERT INTO bots (name, author, house) VALUES (?, ?, ?)", (name, house, kind))
            sha = hashlib.sha256(data).hexdigest()
            same = db.execute(
                "SELECT id, status FROM submissions WHERE bot = ? AND sha256 = ? ORDER BY id DESC", (name, sha)
            ).fetchone()
            if same is None:
                version = db.execute(
                    "SELECT COALESCE(MAX(version), 0) + 1 FROM submissions WHERE bot = ?", (name,)
                ).fetchone()[0]
                status = "clean" if kind == "registered" else "queued"
                report = '{"clean": true, "house": "registered"}' if kind == "registered" else None
                cur = db.execute(
                    "INSERT INTO submissions (author, bot, version, sha256, source, created, status, report, "
                    "review, checked) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'approved', ?)",
                    (house, name, version, sha, data, time.time(), status, report, time.time()),
                )
                sid, status = int(cur.lastrowid or 0), status
            else:
                sid, status = int(same["id"]), str(same["status"])
            db.execute("UPDATE bots SET house = ? WHERE name = ?", (kind, name))
            if status == "clean":
                db.execute("UPDATE bots SET active = ? WHERE name = ?", (sid, name))
                db.execute(
                    "INSERT OR IGNORE INTO ratings (round, submission, mu, sigma) VALUES (?, ?, ?, ?)",
                    (rnd, sid, START_MU, START_SIGMA),
                )
            names.append(name)
    return names


def remove(db: sqlite3.Connection, names: list[str]) -> list[str]:
    """Take each house bot of ``names`` off the ladder (its games, ratings and versions stay).

    :raises store.ContestError: a name that is no house bot."""
    with store.writing(db):
        for name in names:
            row = db.execute("SELECT house FROM bots WHERE name = ?", (name,)).fetchone()
            if row is None or row["house"] is None:
                raise store.ContestError(f"{name[:60]!r} is no house bot here (`arena contest house DIR` lists them)")
            kind = str(row["house"]).removeprefix(OFF)
            db.execute("UPDATE bots SET active = NULL, house = ? WHERE name = ?", (OFF + kind, name))
    return names


def listing(db: sqlite3.Connection) -> list[HouseBot]:
    """Every house bot, playing or not, by name."""
    rows = db.execute(
        "SELECT b.name, b.house, b.active, (SELECT status FROM submissions s WHERE s.bot = b.name "
        "ORDER BY s.id DESC LIMIT 1) AS status FROM bots b WHERE b.house IS NOT NULL ORDER BY b.name"
    ).fetchall()
    out = []
    for r in rows:
        kind = str(r["house"])
        out.append(
            HouseBot(
                str(r["name"]),
                kind.removeprefix(OFF),
                not kind.startswith(OFF),
                int(r["active"]) if r["active"] is not None else None,
                str(r["status"] or ""),
            )
        )
    return out


def playing(db: sqlite3.Connection) -> set[int]:
    """The house bots' versions on the ladder now."""
    return {int(r[0]) for r in db.execute("SELECT active FROM bots WHERE house IS NOT NULL AND active IS NOT NULL")}


def house_bots(db: sqlite3.Connection) -> set[str]:
    """The names of every house bot (playing or not): marked wherever bots are listed."""
    return {str(r[0]) for r in db.execute("SELECT name FROM bots WHERE house IS NOT NULL")}
