"""Rounds (issue 21, item 5): round two opens with a field picked from round one and rules of its own.

``arena contest round DIR --field K [--variant V] [--rule KEY=VALUE ...] [--no-final]``
(:func:`open_round`) picks the best K authors' bots of round one: by the published round-one
final's standings, or, opened ``--no-final`` (never silently without a final), by the ladder's
ratings (docs/RULINGS.md, rulings 83 and 136). Each is a clean, approved version, recorded by its
submission and its sha256; house bots are never picked (ruling 135). The round's rules are stored
with it; the ladder plays every block under the rules of the round it belongs to, and in round
two only the *gauntlet*: a table is one new submission against bots of the field and the house
bots (:func:`pick_gauntlet`; new bots never meet each other, field bots never meet without a new
bot: ruling 84). Ratings are
kept per round (the field starts round two afresh); a round's leaderboard is
:func:`leaderboard`. Opening the round is one transaction: the round, its rules, its field,
their fresh ratings, round one's closing entrants, the reopened uploads, all or nothing.

Rounds are stored by :mod:`arena.server.store.migrate` (schema 2): round one is the contest rules, made with the
database (or when an older database is upgraded).
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ...game.rules import Rules
from ...trust.numbers import whole_number
from ..store import database as store
from . import final

#: The rounds there are: round one, and round two with a field from it.
LAST_ROUND = 2


@dataclass(frozen=True)
class Round:
    """A round as stored: its rules, how its field was picked and the field's submissions."""

    number: int
    rules: Rules
    variant: str
    settings: tuple[str, ...]
    picked_by: str  # "final", "ladder", or "" (round one has no field)
    first_submission: int
    field: tuple[int, ...]

    @property
    def sizes(self) -> list[int]:
        """The table sizes these rules seat (2 to 6, as far as the hands fit)."""
        return [n for n in range(2, 7) if _seats(self.rules, n)]


def _seats(rules: Rules, n: int) -> bool:
    try:
        rules.check_players(n)
    except ValueError:
        return False
    return True


def current_number(db: sqlite3.Connection) -> int:
    return whole_number(store.setting(db, "round"), 1, 99_999, given="text") or 1


def get_round(db: sqlite3.Connection, number: int | None = None) -> Round:
    """Round ``number`` (the current one when None).

    :raises store.ContestError: no such round, or its stored rules are damaged.
    """
    number = current_number(db) if number is None else number
    row = db.execute("SELECT * FROM rounds WHERE number = ?", (number,)).fetchone()
    if row is None:
        raise store.ContestError(f"no round {number} in this contest (rounds 1 to {current_number(db)})")
    try:
        rules = Rules.from_dict(json.loads(row["rules"]))
        settings = json.loads(row["settings"])
    except (ValueError, TypeError, RecursionError) as exc:
        raise store.ContestError(f"round {number}'s stored rules are damaged ({str(exc)[:200]})") from None
    field = [r[0] for r in db.execute("SELECT submission FROM field WHERE round = ? ORDER BY rank", (number,))]
    return Round(
        number,
        rules,
        str(row["variant"]),
        tuple(str(s) for s in settings) if isinstance(settings, list) else (),
        str(row["picked_by"]),
        int(row["first_submission"]),
        tuple(int(s) for s in field),
    )


def round_of(db: sqlite3.Connection, submission: int) -> int:
    """The round a submission was uploaded in (and is checked and rated in)."""
    row = db.execute("SELECT COALESCE(MAX(number), 1) FROM rounds WHERE first_submission <= ?", (submission,))
    return int(row.fetchone()[0])


def members(db: sqlite3.Connection, number: int | None = None) -> list[int]:
    """The submissions that play (or played) round ``number``: for the current round its field,
    each bot's active version uploaded in it (clean, not rejected) and the house bots playing; for
    a past round the entrants it had when the next one opened."""
    rnd = get_round(db, number)
    if rnd.number < current_number(db):
        row = db.execute("SELECT closed FROM rounds WHERE number = ?", (rnd.number,)).fetchone()
        try:
            closed = json.loads(row[0] or "[]")
        except (ValueError, RecursionError):
            closed = []
        return [s for s in closed if type(s) is int] if isinstance(closed, list) else []
    playing = (
        "SELECT s.id FROM submissions s JOIN ratings r ON r.submission = s.id AND r.round = ? "
        "WHERE s.status = 'clean' AND s.review != 'rejected' AND ("
        "s.id IN (SELECT submission FROM field WHERE round = ?) OR "
        "s.id IN (SELECT active FROM bots WHERE house IS NOT NULL AND active IS NOT NULL) OR "
        "(s.id >= ? AND s.id IN (SELECT active FROM bots WHERE active IS NOT NULL))) ORDER BY s.id"
    )
    return [int(r[0]) for r in db.execute(playing, (rnd.number, rnd.number, rnd.first_submission))]


def entrants(db: sqlite3.Connection) -> tuple[Round, list[sqlite3.Row]]:
    """The current round and the versions its ladder plays, each with its source and its rating in the round."""
    rnd = get_round(db)
    rows = db.execute(
        "SELECT s.id, s.bot, s.version, s.source, CAST(r.mu AS REAL) AS mu, CAST(r.sigma AS REAL) AS sigma, "
        "CAST(r.games AS INTEGER) AS games, (SELECT house FROM bots b WHERE b.name = s.bot) AS house "
        "FROM submissions s JOIN ratings r "
        "ON r.submission = s.id AND r.round = ? WHERE s.id IN (SELECT value FROM json_each(?)) ORDER BY s.id",
        (rnd.number, json.dumps(members(db, rnd.number))),
    ).fetchall()
    return rnd, list(rows)


def leaderboard(db: sqlite3.Connection, number: int | None = None) -> dict[str, Any]:
    """Round ``number``'s standings (the current round when None): its entrants ranked by their
    ordinal (mu - 3 sigma) in the round; the round's rules (those changed from the contest's).

    :raises store.ContestError: no such round."""
    rnd = get_round(db, number)
    rows = db.execute(
        "SELECT s.id, s.bot, CAST(s.version AS INTEGER) AS version, a.name AS author, CAST(r.mu AS REAL) AS mu, "
        "CAST(r.sigma AS REAL) AS sigma, CAST(r.games AS INTEGER) AS games, "  # whatever a row holds
        "(SELECT house FROM bots b WHERE b.name = s.bot) AS house FROM submissions s "
        "JOIN authors a ON a.id = s.author JOIN ratings r ON r.submission = s.id AND r.round = ? "
        "WHERE s.id IN (SELECT value FROM json_each(?))",
        (rnd.number, json.dumps(members(db, rnd.number))),
    ).fetchall()
    field = set(rnd.field)
    bots = sorted(
        (
            {
                "bot": r["bot"],
                "author": None if r["house"] else r["author"],  # a house bot is no author's
                "house": r["house"] is not None,
                "submission": r["id"],
                "version": r["version"],
                "field": r["id"] in field,
                "mu": round(r["mu"], 3),
                "sigma": round(r["sigma"], 3),
                "ordinal": round(r["mu"] - 3 * r["sigma"], 3),
                "games": r["games"],
            }
            for r in rows
        ),
        key=lambda b: (-b["ordinal"], b["bot"], b["submission"]),
    )
    for rank, b in enumerate(bots, 1):
        b["rank"] = rank
    games = db.execute(
        "SELECT COUNT(*) FROM games g JOIN blocks b ON b.id = g.block WHERE b.round = ?", (rnd.number,)
    ).fetchone()[0]
    return {
        "contest": store.setting(db, "name"),
        "finals": final.published(db),
        "frozen": store.setting(db, "frozen") == "1",
        "round": rnd.number,
        "current_round": current_number(db),
        "variant": rnd.variant,
        "rules": rnd.rules.changed(),
        "field_from": rnd.picked_by or None,
        "games": int(games),
        "bots": bots,
    }


# -- the gauntlet's matchmaker ------------------------------------------------------------------


class Rated(Protocol):
    """What a matchmaker knows of a version (:class:`arena.server.ladder.matchmaker.LadderEntrant`):
    the gauntlet's (:func:`pick_gauntlet`) and the ladder's pace (:func:`arena.server.ladder.pace.pick`)."""

    @property
    def submission(self) -> int: ...
    @property
    def mu(self) -> float: ...
    @property
    def sigma(self) -> float: ...
    @property
    def games(self) -> int: ...


def pick_gauntlet(new: Sequence[Rated], field: Sequence[Rated], rng: random.Random, sizes: Sequence[int]) -> list[int]:
    """A gauntlet table: one new submission (weighted, as the ladder's focus, to the new and the
    uncertain) and the field's bots nearest to it in rating (with some noise); [] when there is
    no new submission, no field bot, or no table size the rules seat."""
    usable = [n for n in sizes if 2 <= n <= len(field) + 1]
    if not new or not usable:
        return []
    weights = [e.sigma * (1.0 + 4.0 / (1 + e.games)) for e in new]
    focus = rng.choices(list(new), weights=weights)[0]
    size = rng.choice(usable)
    spread = max(focus.sigma, 1.0)
    rivals = sorted(field, key=lambda e: abs(e.mu - focus.mu) + abs(rng.gauss(0.0, spread)))
    table = [focus.submission] + [e.submission for e in rivals[: size - 1]]
    rng.shuffle(table)
    return table


# -- opening round two --------------------------------------------------------------------------


@dataclass(frozen=True)
class Pick:
    submission: int
    bot: str
    version: int
    author: str
    sha256: str


def _pick(db: sqlite3.Connection, sid: int) -> Pick:
    row = db.execute(
        "SELECT s.id, s.bot, s.version, s.sha256, a.name FROM submissions s JOIN authors a ON a.id = s.author "
        "WHERE s.id = ?",
        (sid,),
    ).fetchone()
    return Pick(int(row[0]), str(row[1]), int(row[2]), str(row[4]), str(row[3]))


def final_order(db: sqlite3.Connection, folder: Path) -> list[int]:
    """The approved versions of the published round-one final, best first (its overall standings).
    A version rejected since the final is left out, and so are the house bots (never a field's).

    :raises store.ContestError: the final's database cannot be read, is unfinished, or names a
        version this contest never held (it is not this contest's final)."""
    from ...tournament.db.read import TournamentDBError
    from ...tournament.results.resultset import load_results

    path = final.home(folder, 1) / "final.sqlite"
    try:
        results = load_results(path)
    except TournamentDBError as exc:
        raise store.ContestError(f"the published final's standings cannot be read: {str(exc)[:300]}") from None
    if results.status not in ("finished", "separated", "budget"):
        raise store.ContestError(f"{path}: the final's tournament is not finished; its standings cannot pick a field")
    sha = {b.label: b.sha256 for b in results.stored.bots}
    house = {str(x) for x in final.state(db, 1).get("house", []) if isinstance(x, str)}
    order: list[int] = []
    for row in results.doc["overall"]["standings"]:
        if row["bot"] in house or row.get("kind") == "built-in":  # the organiser's own: never in a field
            continue
        held = db.execute(
            "SELECT id, status, review FROM submissions WHERE sha256 = ? AND bot NOT IN "
            "(SELECT name FROM bots WHERE house IS NOT NULL) ORDER BY id DESC",
            (sha[row["bot"]],),
        ).fetchall()
        if not held:
            raise store.ContestError(
                f"{path}: its bot {str(row['bot'])[:60]!r} is no version uploaded to this contest "
                "(not this contest's final)"
            )
        usable = [int(r["id"]) for r in held if r["status"] == "clean" and r["review"] == "approved"]
        if usable and usable[0] not in order:
            order.append(usable[0])
    return order


def ladder_order(db: sqlite3.Connection) -> list[int]:
    """Round one's approved entrants that played ladder games, by their rating (the leaderboard's
    order); the house bots are not among them (never a field's)."""
    board = [b for b in leaderboard(db, 1)["bots"] if not b["house"]]
    approved = {
        int(r[0]) for r in db.execute("SELECT id FROM submissions WHERE review = 'approved' AND status = 'clean'")
    }
    return [b["submission"] for b in board if b["games"] > 0 and b["submission"] in approved]


def open_round(
    db: sqlite3.Connection,
    folder: Path,
    k: int,
    rules: Rules,
    variant: str,
    settings: Sequence[str],
    no_final: bool = False,
) -> tuple[Round, list[Pick]]:
    """Open round two: its field (the best ``k`` of round one), its rules, ratings afresh for the
    field and the house bots, uploads open again; one transaction. Returns the round and its field,
    best first. Without a published round-one final it is refused unless ``no_final`` (then round
    one has no final, and the field comes from the ladder's ratings): never silently.

    :raises store.ContestError: a round open already, the final running or not published (without
        ``no_final``), no round-one results, ``k`` out of range, or rules that seat no table.
    """
    from ..ladder.rating import START_MU, START_SIGMA
    from .house import playing

    if k < 1:
        raise store.ContestError(f"--field {k}: the field is at least one bot")
    rivals = k + len(playing(db))  # the field and the house bots: what a new bot meets
    sizes = [n for n in range(2, min(6, rivals + 1) + 1) if _seats(rules, n)]
    if not sizes:
        raise store.ContestError(
            f"under these rules no table of 2 to {min(6, rivals + 1)} players can sit (one new bot and up to "
            f"{rivals} of the field and the house): choose other rules or a larger field"
        )
    at = final.current_state(db, 1)
    if at == "running":
        raise store.ContestError("the round-one final is running; open round two once it is published")
    if at != "published" and not no_final:
        raise store.ContestError(
            f"the round-one final has not been published{f' (it is {at})' if at else ''}: run it first "
            f"(`arena contest final {folder}`, or the desk), or add --no-final to open round two without "
            "one (the field then comes from the round-one ladder's ratings)"
        )
    published = at == "published"
    order = final_order(db, folder) if published else None  # a file read: before the transaction
    with store.writing(db):
        now = current_number(db)
        if now >= LAST_ROUND:
            raise store.ContestError(f"round {now} is open already; a contest has rounds one and two")
        if published != (final.current_state(db, 1) == "published"):
            raise store.ContestError("the final's state changed meanwhile; run the command again")
        picked_by = "final" if order is not None else "ladder"
        if order is None:
            order = ladder_order(db)
        if not order:
            raise store.ContestError(
                "no round-one results to pick the field from: no published final, and no approved bot "
                "has played ladder games (approve versions on the desk, or run the final)"
            )
        if k > len(order):
            source = "the final's standings rank" if picked_by == "final" else "the round-one ladder has rated"
            names = ", ".join(_pick(db, sid).bot for sid in order)
            bots = "authors' bots" if len(order) != 1 else "author's bot"
            raise store.ContestError(
                f"--field {k}: {source} only {len(order)} approved {bots} ({names[:200]}); "
                f"choose --field {len(order)} or fewer"
            )
        picks = [_pick(db, sid) for sid in order[:k]]
        closing = members(db, now)
        first = int(db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM submissions").fetchone()[0])
        db.execute("UPDATE rounds SET closed = ? WHERE number = ?", (json.dumps(closing), now))
        db.execute(
            "INSERT INTO rounds VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
            (
                now + 1,
                json.dumps(rules.to_dict()),
                variant,
                json.dumps(list(settings)),
                picked_by,
                first,
                time.time(),
            ),
        )
        for rank, p in enumerate(picks, 1):
            db.execute("INSERT INTO field VALUES (?, ?, ?, ?)", (now + 1, p.submission, rank, p.sha256))
            db.execute("INSERT INTO ratings VALUES (?, ?, ?, ?, 0)", (now + 1, p.submission, START_MU, START_SIGMA))
        for sid in playing(db):  # the house bots play on, rated afresh as the field is
            db.execute("INSERT OR IGNORE INTO ratings VALUES (?, ?, ?, ?, 0)", (now + 1, sid, START_MU, START_SIGMA))
        db.execute("INSERT OR REPLACE INTO contest VALUES ('round', ?)", (str(now + 1),))
        db.execute("INSERT OR REPLACE INTO contest VALUES ('frozen', '0')")
    return get_round(db), picks
