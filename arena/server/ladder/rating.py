"""OpenSkill ratings of the ladder: Plackett-Luce, updated one game at a time."""

from __future__ import annotations

from functools import cache
from typing import Any

#: A new version's rating (OpenSkill's defaults).
START_MU = 25.0
START_SIGMA = 25.0 / 3


@cache
def _model() -> Any:
    from openskill.models import PlackettLuce

    return PlackettLuce()


def rate(before: list[tuple[float, float]], places: list[int]) -> list[tuple[float, float]]:
    """``(mu, sigma)`` per seat after a game with these places (1 first; equal places tie)."""
    if len(before) < 2:
        return list(before)
    model = _model()
    teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    after = model.rate(teams, ranks=list(places))
    return [(float(t[0].mu), float(t[0].sigma)) for t in after]
