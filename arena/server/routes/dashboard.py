"""The author's dashboard (issue 30, item 2): what the pages and the API show an author of their bots.

- :func:`my_bots`: every version of each of the author's bots, as they number them (``v1``,
  ``v2``: :mod:`..store.versions`), with its check, its review and its rating in each round;
- :func:`bot_games`: a bot's games, newest first, a page at a time, filtered by opponent, table
  size and fault: one row a game (a game where two of its versions sat, in round two, says which
  seat was which version), with every seat's version, place and score, and the date;
- :func:`rating_history`: one version's rating after each of its games in a round;
- :func:`game_outputs`: a game's seats' own output (:mod:`..store.outputs`), each only to the
  author of the bot in that seat and to the organiser (R10's rule for printed output).

Everything here is public but the outputs and a seat's fault details, which go to those who may
see them (``own``: the reader wrote the bot, or is the organiser). Every stored value is read as
untrusted (an edited or damaged database gives a page with less on it, never a 500).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request

from ...authoring.check import NAME_PATTERN
from ...game.events import FaultKind
from ...game.visibility import seat_data
from ...trust.numbers import whole_number
from ...web.render import real
from ..store import builds, outputs, versions
from ..store import database as store
from ..store.basics import stored_faults, stored_ints

#: Games a page of a bot's games lists.
PAGE = 50
#: The last page a request may ask for (a bound on the work of one request).
LAST_PAGE = 100_000
#: Fault kinds a bot's games can be filtered by ("any": a fault of any kind).
FAULT_KINDS = ("any", *(k.value for k in FaultKind if k is not FaultKind.RETIRED))
#: Versions of one bot listed at most; games a rating chart draws at most (the latest).
HISTORY = 500
#: A bot's games listed (and filtered) at most: those of its latest seats, found in one pass over its
#: seats' index (as the chart's), the rest of a request's work bounded however many games it played.
WINDOW = 5000

#: A reader: ("organiser", 0), ("author", id), or None (the public).
Reader = tuple[str, int] | None


def owns(reader: Reader, author: object) -> bool:
    """Whether ``reader`` may see what only a bot's author sees (its output, its faults' details):
    the organiser, or the author whose id ``author`` (a stored value) is."""
    if reader is None:
        return False
    return reader[0] == "organiser" or (reader[0] == "author" and type(author) is int and reader[1] == author)


def when(value: Any) -> str:
    """A stored time as ``2025-05-01 14:03 UTC`` ("" when it is not one)."""
    seconds = real(value)
    if seconds is None or not 0 <= seconds < 253402300800:
        return ""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


# -- my bots ------------------------------------------------------------------------------------


def my_bots(db: sqlite3.Connection, author: int) -> list[dict[str, Any]]:
    """The author's bots, by name, each with every version (newest first): its label, when it was
    uploaded, its check (a failed one too: ``error`` says why), its review and the organiser's
    comment, whether it plays, and its rating in each round it was rated in."""
    bots = []
    for bot in db.execute("SELECT name, active FROM bots WHERE author = ? ORDER BY lower(name)", (author,)):
        rows = db.execute(  # a check waiting for its build says 'building'
            f"SELECT s.id, s.version, {builds.STATUS} AS status, s.error, s.review, s.comment, s.created "
            f"{builds.JOIN} WHERE s.bot = ? AND s.author = ? ORDER BY s.version DESC LIMIT ?",
            (bot["name"], author, HISTORY),
        ).fetchall()
        ratings: dict[int, list[dict[str, Any]]] = {}
        for r in db.execute(
            "SELECT submission, round, CAST(mu AS REAL), CAST(sigma AS REAL), CAST(games AS INTEGER) FROM ratings "
            "WHERE submission IN (SELECT id FROM submissions WHERE bot = ?) ORDER BY round",
            (bot["name"],),
        ):
            mu, sigma = float(r[2] or 0.0), float(r[3] or 0.0)
            ratings.setdefault(r[0], []).append(
                {"round": r[1], "mu": mu, "sigma": sigma, "ordinal": mu - 3 * sigma, "games": r[4]}
            )
        versions_ = [
            {
                "id": r["id"],
                "version": r["version"],
                "label": versions.label(r["version"]),
                "uploaded": when(r["created"]),
                "status": r["status"],
                "error": r["error"],
                "review": r["review"],
                "comment": r["comment"],
                "active": r["id"] == bot["active"],
                "ratings": ratings.get(r["id"], []),
            }
            for r in rows
        ]
        played = db.execute(
            "SELECT COUNT(*) FROM seats WHERE submission IN (SELECT id FROM submissions WHERE bot = ?)", (bot["name"],)
        ).fetchone()
        bots.append({"name": bot["name"], "versions": versions_, "games": played[0]})
    return bots


# -- a bot's games ------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameFilter:
    """Which of a bot's games to list: against ``opponent`` (a bot's name), at tables of
    ``players``, with a ``fault`` of the bot's (a kind, or "any"); page ``page`` (from 1)."""

    opponent: str | None = None
    players: int | None = None
    fault: str | None = None
    page: int = 1

    def query(self) -> dict[str, str]:
        """The filter as a page's query parameters (the page left out)."""
        found = {"opponent": self.opponent, "players": self.players, "fault": self.fault}
        return {k: str(v) for k, v in found.items() if v is not None}


#: Every game, the first page.
ALL_GAMES = GameFilter()


def game_filter(request: Request) -> GameFilter:
    """The games a request asks for (``?opponent=NAME&players=N&fault=KIND&page=N``; an empty field
    is no filter). :raises HTTPException: 400, a value that is none of these."""
    query = request.query_params
    opponent = query.get("opponent") or None
    if opponent is not None and not NAME_PATTERN.fullmatch(opponent):
        raise HTTPException(400, "?opponent= takes a bot's name")
    players = query.get("players") or None
    size = whole_number(players, 2, 6, given="text") if players is not None else None
    if players is not None and size is None:
        raise HTTPException(400, "?players= takes a table size, 2 to 6")
    fault = query.get("fault") or None
    if fault is not None and fault not in FAULT_KINDS:
        raise HTTPException(400, f"?fault= takes one of {', '.join(FAULT_KINDS)}")
    number = whole_number(query.get("page") or "1", 1, LAST_PAGE, given="text")
    if number is None:
        raise HTTPException(400, f"?page= takes a page's number, 1 to {LAST_PAGE}")
    return GameFilter(opponent, size, fault, number)


#: A bot's games (one row a game, its latest seat's rowid for the order) under a :class:`GameFilter`.
_GAMES = (
    "FROM seats s JOIN games g ON g.key = s.game WHERE s.rowid IN (SELECT value FROM json_each(:seats))"
    " AND (:players IS NULL OR (SELECT COUNT(*) FROM seats x WHERE x.game = s.game) = :players)"
    " AND (:opponent IS NULL OR EXISTS (SELECT 1 FROM seats o JOIN submissions os ON os.id = o.submission"
    " WHERE o.game = s.game AND os.bot = :opponent AND os.bot != :bot))"
    " AND (:fault IS NULL OR (g.faults != '[]' AND CASE WHEN json_valid(g.faults) THEN EXISTS ("
    "SELECT 1 FROM json_each(g.faults) f WHERE json_type(f.value) = 'array' AND json_extract(f.value, '$[0]') = s.seat"
    " AND json_extract(f.value, '$[1]') != 'retired' AND (:fault = 'any' OR json_extract(f.value, '$[1]') = :fault))"
    " ELSE 0 END))"
)


def bot_games(db: sqlite3.Connection, bot: str, reader: Reader, flt: GameFilter) -> dict[str, Any]:
    """A page of ``bot``'s games, newest first (:class:`GameFilter`), as ``reader`` may see them:
    each game's date, round, table size and every seat (its version's label, place and score,
    which are the bot's own) with the bot's faults; for the bot's author and the organiser also
    its faults' details and which of its seats left output (:func:`game_outputs`)."""
    owner = db.execute("SELECT author FROM bots WHERE name = ?", (bot,)).fetchone()
    own = owner is not None and owns(reader, owner[0])
    latest = [  # its latest WINDOW seats: what the list reads, however many games it played
        r[0]
        for r in db.execute(
            "SELECT rowid FROM seats WHERE submission IN (SELECT id FROM submissions WHERE bot = ?) "
            "ORDER BY rowid DESC LIMIT ?",
            (bot, WINDOW + 1),
        )
    ]
    args = {
        "bot": bot,
        "players": flt.players,
        "opponent": flt.opponent,
        "fault": flt.fault,
        "seats": json.dumps(latest[:WINDOW]),
    }
    row = db.execute(f"SELECT COUNT(DISTINCT s.game) {_GAMES}", args).fetchone()
    total = int(row[0])
    pages = max(1, -(-total // PAGE))
    page = min(flt.page, pages)
    keys = [
        str(r[0])
        for r in db.execute(
            f"SELECT s.game, MAX(s.rowid) AS n {_GAMES} GROUP BY s.game ORDER BY n DESC LIMIT :limit OFFSET :offset",
            {**args, "limit": PAGE, "offset": (page - 1) * PAGE},
        )
    ]
    marks = ",".join("?" * len(keys))
    games = {
        str(r["key"]): r
        for r in db.execute(
            f"SELECT g.key, g.scores, g.faults, g.finished, b.round FROM games g LEFT JOIN blocks b ON b.id = g.block "
            f"WHERE g.key IN ({marks})",
            keys,
        )
    }
    seats: dict[str, list[sqlite3.Row]] = {}
    for r in db.execute(
        "SELECT s.game, s.seat, s.place, s.submission, sub.bot, sub.version FROM seats s "
        f"LEFT JOIN submissions sub ON sub.id = s.submission WHERE s.game IN ({marks}) ORDER BY s.game, s.seat",
        keys,
    ):
        seats.setdefault(str(r["game"]), []).append(r)
    spoke = set()
    if own and keys:
        spoke = {(str(r[0]), r[1]) for r in db.execute(f"SELECT game, seat FROM outputs WHERE game IN ({marks})", keys)}
    rows = []
    for key in keys:
        g = games.get(key)
        if g is None:
            continue
        scores = stored_ints(g["scores"])
        faults = stored_faults(g["faults"])
        shown = []
        for s in seats.get(key, []):
            seat = s["seat"]
            mine = s["bot"] == bot
            shown.append(
                {
                    "seat": seat,
                    "name": versions.player(s["bot"], s["version"]) if s["bot"] is not None else "?",
                    "bot": s["bot"],
                    "label": versions.label(s["version"]),
                    "place": s["place"],
                    "score": scores[seat] if type(seat) is int and 0 <= seat < len(scores) else None,
                    "mine": mine,
                    "faults": [k for f, k, _, _ in faults if f == seat and k != FaultKind.RETIRED] if mine else [],
                    "details": fault_details(faults, seat) if mine and own else [],
                    "output": mine and own and (key, seat) in spoke,
                }
            )
        rows.append(
            {
                "key": key,
                "date": when(g["finished"]),
                "round": g["round"],
                "players": len(shown),
                "seats": shown,
                "mine": [s for s in shown if s["mine"]],
                "opponents": [s for s in shown if not s["mine"]],
            }
        )
    return {
        "bot": bot,
        "own": own,
        "total": total,
        "page": page,
        "pages": pages,
        "per_page": PAGE,
        "window": WINDOW if len(latest) > WINDOW else None,  # set: only its latest WINDOW seats' games are listed
        "games": rows,
    }


def fault_details(faults: list[tuple[int, str, str, int]], seat: Any) -> list[dict[str, Any]]:
    """``seat``'s faults (not its retirement) grouped by kind and detail: how many, in which rounds.
    What its author and the organiser see of them (R10)."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for f, kind, detail, rnd in faults:
        if f == seat and kind != FaultKind.RETIRED:
            group = groups.setdefault((kind, detail), {"kind": kind, "detail": detail, "count": 0, "rounds": []})
            group["count"] += 1
            if rnd not in group["rounds"]:
                group["rounds"].append(rnd)
    return list(groups.values())


def opponents(db: sqlite3.Connection, bot: str) -> list[str]:
    """The bots a filter by opponent offers: every other bot of the contest (at most :data:`HISTORY`)."""
    found = db.execute("SELECT name FROM bots WHERE name != ? ORDER BY lower(name) LIMIT ?", (bot, HISTORY))
    return [str(r[0]) for r in found]


# -- a version's rating -------------------------------------------------------------------------


def rating_history(db: sqlite3.Connection, bot: str, label: str | None = None) -> dict[str, Any] | None:
    """The rating of one version of ``bot`` after each of its latest :data:`HISTORY` games in the
    last round it played: the version ``label`` names (``v2``), else the active one, else the
    newest that played. None when no version of it has played."""
    from ..ladder.rating import START_MU, START_SIGMA

    number = whole_number(label[1:], 1, given="text") if label and label[:1] == "v" else None
    chosen = db.execute(
        "SELECT s.id, s.version FROM submissions s WHERE s.bot = ? AND EXISTS (SELECT 1 FROM seats x WHERE "
        "x.submission = s.id) ORDER BY (CAST(s.version AS TEXT) = ?) DESC, "
        "(s.id = (SELECT active FROM bots WHERE name = s.bot)) DESC, s.version DESC LIMIT 1",
        (bot, None if number is None else str(number)),
    ).fetchone()
    if chosen is None:
        return None
    rows = db.execute(  # its latest seats first, then their games: the same cost after 500 games or 50 000
        "SELECT CAST(s.mu AS REAL), CAST(s.sigma AS REAL), b.round FROM (SELECT rowid AS n FROM seats "
        "WHERE submission = ? ORDER BY rowid DESC LIMIT ?) x JOIN seats s ON s.rowid = x.n "
        "JOIN games g ON g.key = s.game LEFT JOIN blocks b ON b.id = g.block ORDER BY x.n DESC",
        (chosen[0], HISTORY),
    ).fetchall()
    latest = rows[0][2] if rows else None
    kept = [(r[0], r[1]) for r in reversed(rows) if r[2] == latest and r[1]]  # an unrated seat holds sigma 0
    rated = db.execute(  # its games in that round, as its rating counts them
        "SELECT CAST(games AS INTEGER), EXISTS (SELECT 1 FROM ratings x WHERE x.submission = r.submission AND "
        "x.round != r.round AND x.games > 0) FROM ratings r WHERE r.submission = ? AND r.round = ?",
        (chosen[0], latest),
    ).fetchone()
    played = max(rated[0] or 0, len(kept)) if rated is not None else len(kept)
    first = played - len(kept) + 1
    points = [(first + i, mu, sigma) for i, (mu, sigma) in enumerate(kept)]
    if first == 1:  # its whole history: from where every version starts
        points.insert(0, (0, START_MU, START_SIGMA))
    others = db.execute(
        "SELECT version FROM submissions s WHERE bot = ? AND EXISTS (SELECT 1 FROM seats x WHERE x.submission = s.id) "
        "ORDER BY version LIMIT ?",
        (bot, HISTORY),
    ).fetchall()
    return {
        "label": versions.label(chosen[1]),
        "round": latest,
        "points": points,
        "games": played,
        "latest": {"mu": kept[-1][0], "sigma": kept[-1][1], "ordinal": kept[-1][0] - 3 * kept[-1][1]} if kept else None,
        "earlier": bool(rated[1]) if rated is not None else False,  # rated in another round too: not drawn
        "versions": [versions.label(r[0]) for r in others],
    }


# -- a game's own outputs -----------------------------------------------------------------------


def game_outputs(db: sqlite3.Connection, key: str, reader: Reader) -> list[dict[str, Any]] | None:
    """The seats of game ``key`` whose output ``reader`` may read (the organiser: every seat; an
    author: the seats of their bots; anyone else: none), each with its version, place, score, its
    faults with their details, its ``say`` lines and its own output (:mod:`..store.outputs`).
    None when there is no such game."""
    row = db.execute("SELECT scores, log FROM games WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    seated = db.execute(
        "SELECT s.seat, s.place, sub.bot, sub.version, sub.author FROM seats s "
        "LEFT JOIN submissions sub ON sub.id = s.submission WHERE s.game = ? ORDER BY s.seat",
        (key,),
    ).fetchall()
    readable = [r for r in seated if owns(reader, r["author"])]
    if not readable:
        return []
    texts = outputs.of_game(db, key, {r["seat"] for r in readable})
    events = store.unpack(row["log"])
    scores = stored_ints(row["scores"])
    shown = []
    rounds, number = [], None  # the round each event fell in (a fault event does not say)
    for e in events:
        if e.get("event") == "deal":
            number = e.get("round")
        rounds.append(number)
    for r in readable:
        seat = r["seat"]
        seen = [
            {**part, "round": rnd}
            for e, rnd in zip(events, rounds, strict=True)
            if e.get("seat") == seat and (part := seat_data(e, seat)) is not None
        ]
        shown.append(
            {
                "seat": seat,
                "name": versions.player(r["bot"], r["version"]),
                "bot": r["bot"],
                "label": versions.label(r["version"]),
                "place": r["place"],
                "score": scores[seat] if type(seat) is int and 0 <= seat < len(scores) else None,
                "faults": [
                    {"kind": e.get("kind"), "detail": e.get("detail"), "round": e.get("round")}
                    for e in seen
                    if e.get("event") == "fault" and e.get("kind") != FaultKind.RETIRED
                ],
                "said": [str(e.get("text")) for e in seen if e.get("event") == "say" and not e.get("output")],
                "output": texts.get(seat, ""),
            }
        )
    return shown
