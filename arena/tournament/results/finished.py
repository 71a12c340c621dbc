"""One finished tournament game, whatever made it: the one results type.

A game comes back from a worker as a :class:`~arena.tournament.backends.games.GameRecord` (its
result plus what only the writer needs: the record's events, fault details
and move times); :meth:`GameRecord.result` is its :class:`GameResult`. A game
read back from a database is a :class:`GameResult` too, built only from rows
that :mod:`arena.tournament.db.rows` checked. Standings, the separation verdicts, the adaptive
planner, the report's game list and the re-play check all take this one type,
so a fresh game and a stored one are judged alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..plan.schedule import GameKey


class SeatResult(NamedTuple):
    """One seat's result: its bot (entrant index), place, score, loser, faults and retirement."""

    bot: int
    place: int
    score: int
    loser: bool
    faults: int
    retired: bool


@dataclass(frozen=True)
class GameResult:
    """A finished game: its key, per-seat results (seat order) and length. ``id`` is the
    database's row id (0 for a game not read from a database)."""

    key: GameKey
    seats: tuple[SeatResult, ...]
    seed: int = 0
    rounds: int = 0
    moves: int = 0
    id: int = 0

    @property
    def seating(self) -> tuple[int, ...]:
        """The bot of each seat."""
        return tuple(s.bot for s in self.seats)

    @property
    def places(self) -> tuple[int, ...]:
        return tuple(s.place for s in self.seats)

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(s.score for s in self.seats)


def differences(stored: GameResult, replayed: GameResult) -> list[str]:
    """How a re-played game differs from its stored result (empty when it is the same game)."""
    out = []
    for what, a, b in (
        ("seed", stored.seed, replayed.seed),
        ("seating", stored.seating, replayed.seating),
        ("places", stored.places, replayed.places),
        ("scores", stored.scores, replayed.scores),
        ("rounds", stored.rounds, replayed.rounds),
        ("moves", stored.moves, replayed.moves),
    ):
        if a != b:
            out.append(
                f"{what} {list(a) if isinstance(a, tuple) else a} stored, "
                f"{list(b) if isinstance(b, tuple) else b} re-played"
            )
    return out
