"""A tournament to run (:class:`Plan`): its entrants, rules and schedule, the settings that must
match to resume, and the :class:`~arena.tournament.backends.games.Job` its workers play.

Made by :func:`arena.tournament.runner.plan` from the command line, or from a database by
:mod:`arena.tournament.rerun`; read by the loop, the runner, reruns and the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...game.rules import Rules
from ...game.seeds import guessable
from ...trust.botsource import BotSource
from ...trust.text import storable
from ..backends.games import Job
from ..db.database import BotRow, canonical
from ..results.teams import Team, to_settings
from .schedule import Schedule


@dataclass(frozen=True)
class Entrant:
    src: BotSource
    label: str
    trusted: bool
    author: str | None = None  # from the submission manifest, when the file was verified against one

    def row(self, index: int) -> BotRow:
        src = self.src
        path = storable(src.path) if src.origin == "file" and src.path else None
        return BotRow(index, self.label, src.name, path, src.origin, src.sha256)


@dataclass(frozen=True)
class Plan:
    """A tournament to run: who, under what rules, on which schedule."""

    entrants: tuple[Entrant, ...]
    rules: Rules
    schedule: Schedule
    trusted: bool
    #: Bot files of submissions folders played without matching their manifests (--allow-unverified).
    unverified: tuple[str, ...] = ()
    #: The sandbox's time limits (CPU seconds per move and per game).
    move_seconds: float = 1.0
    game_seconds: float = 30.0
    #: The teams variant: the partnerships, each of two entrants (see :mod:`~arena.tournament.results.teams`).
    teams: tuple[Team, ...] = ()

    @property
    def untrusted(self) -> bool:
        """Whether any entrant runs in the sandbox (and so might search for a guessable seed)."""
        return not all(e.trusted for e in self.entrants)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(e.label for e in self.entrants)

    @property
    def authors(self) -> dict[str, str]:
        """Entrant label -> author, for the entrants whose submission manifest names one."""
        return {e.label: e.author for e in self.entrants if e.author}

    @property
    def settings(self) -> dict[str, Any]:
        """Everything that decides the games' results, as stored in the database."""
        s = self.schedule
        return {
            "seed": s.seed,
            "sizes": [x.size for x in s.sizes],
            "games": s.deals,
            "schedule": {str(x.size): x.kind for x in s.sizes},
            "rules": self.rules.to_dict(),
            "trusted": self.trusted,
            "move_seconds": self.move_seconds,
            "game_seconds": self.game_seconds,
        } | ({"teams": to_settings(self.teams)} if self.teams else {})

    def job(self, keep_logs: bool = False) -> Job:
        ident = canonical([self.settings, [e.src.sha256 for e in self.entrants]])
        return Job(
            tuple(e.src for e in self.entrants),
            self.labels,
            tuple(e.trusted for e in self.entrants),
            self.rules.to_dict(),
            self.schedule,
            keep_logs,
            ident,
            {"move_seconds": self.move_seconds, "game_seconds": self.game_seconds},
        )

    def describe(self) -> list[str]:
        """Lines for people: the schedule that runs and its size."""
        n = len(self.entrants)
        s = self.schedule
        seed = f"seed {s.seed}" if guessable(s.seed) else "a secret seed (shown after the run)"
        who = f"{len(self.teams)} teams of two ({n} bots)" if self.teams else f"{n} bots"
        lines = [
            f"tournament: {who}, {seed}, rules {self.rules.name}"
            + (f" ({', '.join(f'{k}={v}' for k, v in self.rules.changed().items())})" if self.rules.changed() else "")
        ]
        for x in s.sizes:
            games = len(x.tables) * s.deals * x.size
            what = (
                f"{x.size} players: {x.kind}, {len(x.tables)} tables of {x.size // 2} teams"
                if self.teams
                else x.describe(n)
            )
            lines.append(f"  {what}; x {s.deals} deal{'s' if s.deals > 1 else ''} x {x.size} seatings = {games} games")
        return lines
