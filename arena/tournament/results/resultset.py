"""The one result set of a tournament database: what every reader of results asks.

``arena standings``, ``arena tournament``'s final table and ``arena report``
all take their standings from :func:`results_of` (or :func:`load_results`):
the standings overall and per table size with each bot's kind and author,
the separation verdicts, and how many games the schedule plans. So the
terminal table and the published report never disagree on an order, a
column or a count.

A teams tournament ranks teams, not bots (:func:`teams_doc`).

A gauntlet is ranked by its paired verdicts (docs/RULINGS.md, ruling 68):
the new bot plays every field bot on the same deals, while the field bots
meet different opponents, so raw scores do not compare them. The field keeps
its score order; the new bot's place is one plus the number of field bots it
did not beat on the deals they shared (it beat one when the verdict is
"better", or, while not separated, when its paired mean difference is above 0).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..db.read import Stored, load, open_readonly
from .separation import separation_of
from .standings import kind_of, standings_doc
from .teams import add_members, team_games


@dataclass(frozen=True)
class ResultSet:
    """A database's checked content and the standings every command shows of it."""

    stored: Stored
    doc: dict[str, Any]  # standings_doc(...) with "separation" (and "rank_rule" for a gauntlet)

    @property
    def adaptive(self) -> bool:
        return "adaptive" in self.stored.settings

    @property
    def gauntlet(self) -> bool:
        s = self.stored.settings
        return "gauntlet" in s.get("schedule", {}).values() or bool(s.get("adaptive", {}).get("gauntlet"))

    @property
    def played(self) -> int:
        return len(self.stored.games)

    @property
    def planned(self) -> int | None:
        """Games the schedule plans; None for an adaptive run (it plays until separated)."""
        if self.adaptive:
            return None
        return self.stored.total

    @property
    def status(self) -> str:
        """An adaptive run's state ("separated", "budget" or "playing"); else "finished" or "playing"."""
        if self.adaptive:
            return str(self.doc["separation"].get("status", "playing"))
        return "finished" if self.played >= self.stored.total else "playing"

    @property
    def finished(self) -> bool:
        return self.status in ("finished", "separated")

    @property
    def first_round(self) -> int:
        """An adaptive run's first round: every table, ``first_deals`` deals, every rotation."""
        s = self.stored.settings
        if not self.adaptive:
            return 0
        seats = sum(int(size) * len(self.stored.tables.get(int(size), ())) for size in s["sizes"])
        return seats * int(s["adaptive"]["first_deals"])


def results_of(stored: Stored) -> ResultSet:
    """The standings of a loaded database: kinds, authors, separation, the gauntlet's rank rule."""
    if stored.teams:
        return ResultSet(stored, teams_doc(stored))
    labels = stored.labels
    doc = standings_doc(labels, stored.games, [kind_of(b.origin) for b in stored.bots], stored.authors)
    doc["separation"] = separation_of(stored.tables, stored.settings, labels, stored.games, doc)
    results = ResultSet(stored, doc)
    if results.gauntlet and labels:
        rank_gauntlet(doc, labels[0])
    else:
        announce(doc)
    return results


def announce(doc: dict[str, Any]) -> None:
    """What the overall standings can announce (docs/RULINGS.md 137): each row's ``next``, the
    verdict on it and the row below (``separated``, ``not separated``, ...; None for the last row or
    a pair not compared), and ``champion``: the one bot of rank 1, when it is separated from the
    next (None otherwise: a tie, or first place not settled)."""
    verdicts = {(p["upper"], p["lower"]): p for p in doc["separation"].get("pairs", [])}
    rows = doc["overall"]["standings"]
    for row, below in zip(rows, [*rows[1:], None], strict=True):
        pair = verdicts.get((row["bot"], below["bot"])) if below is not None else None
        row["next"] = None if pair is None else ("separated" if pair["separated"] else "not separated")
    first = [r for r in rows if r["rank"] == 1 and r["games"]]
    champion = len(first) == 1 and (first[0]["next"] == "separated" or len(rows) == 1)
    doc["champion"] = first[0]["bot"] if champion else None
    doc["confidence"] = doc["separation"].get("confidence", 0.95)


def teams_doc(stored: Stored) -> dict[str, Any]:
    """A teams tournament's standings: teams ranked from their results (:mod:`.teams`, ruling 76),
    each row naming its members; the separation verdicts compare teams."""
    teams = stored.teams
    names = [t.name for t in teams]
    games = team_games(teams, stored.games)
    doc = standings_doc(names, games, ["team"] * len(teams))
    add_members(doc, teams, stored.labels, stored.authors)
    doc["separation"] = separation_of(stored.tables, stored.settings, names, games, doc)
    doc["teams"] = True
    announce(doc)
    return doc


def load_results(path: str | os.PathLike[str]) -> ResultSet:
    """Open the database at ``path`` read-only, check every row, and build its result set.

    :raises TournamentDBError:.
    """
    conn, meta = open_readonly(path)
    try:
        stored = load(conn, meta)
    finally:
        conn.close()
    return results_of(stored)


def beats(pair: dict[str, Any]) -> bool:
    """Whether the new bot goes above the field bot of a gauntlet comparison."""
    if pair["verdict"] in ("better", "worse"):
        return bool(pair["verdict"] == "better")
    return pair["diff"] is not None and pair["diff"] > 0


def rank_gauntlet(doc: dict[str, Any], new: str) -> None:
    """Re-rank every scope of ``doc`` by ruling 68 (see the module's text)."""
    above = {p["lower"] for p in doc["separation"]["pairs"] if p["upper"] == new and beats(p)}
    doc["rank_rule"] = "gauntlet"
    scopes = [doc["overall"], *doc["by_size"].values()]
    for scope in {id(s): s for s in scopes}.values():
        rows = scope["standings"]
        me = [r for r in rows if r["bot"] == new]
        field = [r for r in rows if r["bot"] != new]
        if not me or not me[0]["games"]:
            continue
        played = [r for r in field if r["games"]]
        at = sum(1 for r in played if r["bot"] not in above)
        ordered = played[:at] + me + played[at:] + [r for r in field if not r["games"]]
        for rank, row in enumerate(ordered, 1):
            row["rank"] = rank
        scope["standings"] = ordered
