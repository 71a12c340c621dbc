"""The teams variant in tournaments: partnerships as entrants, results per team.

With the rules' ``teams`` knob on, a tournament's entrant is a partnership of two
bots: the same bot in both partner seats, or a named pair (``--team
NAME=BOT1,BOT2``). Each member is a bot of the database (its own row, label and
sha256), and the settings name the teams (``settings.teams``: a list of
``{"team": NAME, "members": [BOT, BOT]}``), so a resume with other teams is
refused like one with other settings. A table of ``K`` seats holds ``K/2`` whole
teams; the schedule (:class:`~arena.tournament.plan.schedule.Schedule` with ``teams``) seats partners
opposite (seat ``i`` and ``i + K/2``) in every rotation.

A team's result in a game follows R9.1 with teams (docs/RULINGS.md, ruling 76):
the partners share their place, computed from the summed score; the team's
place among the ``K/2`` teams is one plus the number of teams placed strictly
above it (a team with a retired member takes that member's place, after every
team without one). Its score is the partners' sum, it lost when they lost, and
its faults are theirs together. Standings then rank teams exactly as they rank
bots, from these team results (:func:`team_games`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...trust.text import clean_name
from ..db.guard import damaged, show
from .finished import GameResult, SeatResult

#: The longest team name (a cleaned name, like a bot's).
MAX_TEAM_NAME = 40


@dataclass(frozen=True)
class Team:
    """A partnership: its name and its two members (entrant indices, the first one's seat is the lower)."""

    name: str
    members: tuple[int, int]


def parse_team(text: str) -> tuple[str, str, str]:
    """``"NAME=BOT1,BOT2"`` -> ``(NAME, BOT1, BOT2)``.

    :raises ValueError: one line saying what is wrong.
    """
    name, eq, rest = text.partition("=")
    parts = rest.split(",")
    if not eq or len(parts) != 2 or not all(p.strip() for p in parts):
        raise ValueError(f"--team takes NAME=BOT1,BOT2 (a name and two bots), not {show(text)}")
    cleaned = clean_name(name.strip())
    if not name.strip() or cleaned != name.strip() or len(cleaned) > MAX_TEAM_NAME:
        raise ValueError(
            f"--team {show(text)}: a team name is printable text of 1 to {MAX_TEAM_NAME} characters, no runs of spaces"
        )
    return cleaned, parts[0].strip(), parts[1].strip()


def to_settings(teams: Sequence[Team]) -> list[dict[str, Any]]:
    """The teams as stored in the settings."""
    return [{"team": t.name, "members": list(t.members)} for t in teams]


def read_teams(value: object, bots: int | None = None) -> tuple[Team, ...]:
    """The stored teams (``settings.teams``), checked: at least two, distinct printable names,
    and (with ``bots``) every bot of the database the member of exactly one team.

    :raises DamagedDB:.
    """
    if type(value) is not list or not 2 <= len(value) <= 5000:
        raise damaged("meta", f"settings: teams {show(value)} are not a list of 2 to 5000 teams")
    out: list[Team] = []
    names: set[str] = set()
    for i, row in enumerate(value):
        if type(row) is not dict or set(row) != {"team", "members"}:
            raise damaged("meta", f"settings: team {i} is not an object of a team name and its members")
        name, members = row["team"], row["members"]
        if type(name) is not str or not name or clean_name(name) != name or len(name) > MAX_TEAM_NAME:
            raise damaged("meta", f"settings: team {i}'s name {show(name)} is not a clean name")
        if name.casefold() in names:
            raise damaged("meta", f"settings: team name {show(name)} twice")
        names.add(name.casefold())
        if type(members) is not list or len(members) != 2 or any(type(m) is not int or m < 0 for m in members):
            raise damaged("meta", f"settings: team {show(name)}'s members {show(members)} are not two bot numbers")
        out.append(Team(name, (members[0], members[1])))
    if bots is not None:
        seen = sorted(m for t in out for m in t.members)
        if seen != list(range(bots)):
            raise damaged("meta", "settings: the teams' members are not each bot of the database once")
    return tuple(out)


def check_layout(
    teams: Sequence[Team], tables: dict[int, tuple[tuple[int, ...], ...]], games: Sequence[GameResult]
) -> None:
    """Every table holds whole teams, and every game seats partners opposite.

    :raises DamagedDB:.
    """
    team_of = {m: i for i, t in enumerate(teams) for m in t.members}
    for size, of_size in tables.items():
        for n, table in enumerate(of_size):
            if size % 2 or any(
                teams[team_of[m]].members[0] not in table or teams[team_of[m]].members[1] not in table for m in table
            ):
                raise damaged("tables", f"table {size}/{n} is not whole teams")
    for g in games:
        half = len(g.seats) // 2
        if any(team_of[g.seats[s].bot] != team_of[g.seats[s + half].bot] for s in range(half)):
            raise damaged("results", f"game {g.key}: partners do not sit opposite")


def team_games(teams: Sequence[Team], games: Sequence[GameResult]) -> list[GameResult]:
    """Each game as a game of teams: one seat per team (in seat order of its first partner to
    sit), its ``bot`` the team's index, with the team's place, summed score, loss, faults and
    retirement (see the module's text)."""
    team_of = {m: i for i, t in enumerate(teams) for m in t.members}
    out = []
    for g in games:
        by_team: dict[int, list[SeatResult]] = {}
        for seat in g.seats:
            by_team.setdefault(team_of[seat.bot], []).append(seat)
        worst = {t: max(s.place for s in seats) for t, seats in by_team.items()}
        rows = tuple(
            SeatResult(
                t,
                1 + sum(1 for w in worst.values() if w < worst[t]),
                sum(s.score for s in seats),
                any(s.loser for s in seats),
                sum(s.faults for s in seats),
                any(s.retired for s in seats),
            )
            for t, seats in by_team.items()
        )
        out.append(GameResult(g.key, rows, g.seed, g.rounds, g.moves, g.id))
    return out


def add_members(doc: dict[str, Any], teams: Sequence[Team], labels: Sequence[str], authors: dict[str, str]) -> None:
    """Name each team row's members (bot labels) and, when manifests named them, their authors."""
    members = {t.name: [labels[m] for m in t.members] for t in teams}
    for scope in [doc["overall"], *doc["by_size"].values()]:
        for row in scope["standings"]:
            row["members"] = members[row["bot"]]
            if authors:
                by = sorted({authors[m] for m in row["members"] if m in authors})
                row["author"] = ", ".join(by) if by else None
