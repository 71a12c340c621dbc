"""The rules in force: one frozen value whose defaults are the contest variant.

Every knob of docs/rules.md is a field here; a variant is a ``Rules`` with
other settings, found by name (:func:`arena.plugins.variants`). The engine
reads these fields; it never checks a variant's name.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .cards import DEFAULT_POINTS, RANKS


def _frozen_points(points: Mapping[str, int] | None = None) -> Mapping[str, int]:
    table = dict(DEFAULT_POINTS)
    if points:
        for rank, value in points.items():
            rank = str(rank).lower()
            if rank not in RANKS:
                raise ValueError(f"R1.3: unknown rank {rank!r} in point table; ranks: {' '.join(RANKS)}")
            if type(value) is not int or not POINT_BOUNDS[0] <= value <= POINT_BOUNDS[1]:
                raise ValueError(
                    f"R1.3: points of rank {rank} must be a whole number from {POINT_BOUNDS[0]} "
                    f"to {POINT_BOUNDS[1]}, not {value!r:.40}"
                )
            table[rank] = value
    return MappingProxyType(table)


#: The range of each whole-number knob: beyond these a game is either impossible (R3.1: the
#: hands and the opening card must fit in 36 cards, and the R2.4 and R8.4 guards must end it)
#: or would run for hours, so they are refused before any game is played.
BOUNDS: dict[str, tuple[int, int]] = {
    "limit": (1, 1_000_000),
    "max_rounds": (1, 10_000),
    "hand_size": (1, 7),
    "burn": (-1_000_000, 1_000_000),
    "max_moves": (1, 100_000),
    "jack_finish": (0, 10_000),
}
#: Points of one card (R1.3) lie in this range.
POINT_BOUNDS = (-10_000, 10_000)
RULE_OF = {"limit": "R2.3: ", "max_rounds": "R2.4: ", "hand_size": "R3.1: ", "burn": "R8.3: ", "max_moves": "R8.4: "}


@dataclass(frozen=True, eq=False)
class Rules:
    """Rule settings (the knobs of docs/rules.md). Defaults are the contest variant.

    >>> Rules().limit, Rules().hand_size
    (125, 5)
    """

    #: Variant name, for people and records only.
    name: str = "contest"
    #: R1.3 penalty points of each rank.
    points: Mapping[str, int] = field(default_factory=_frozen_points)
    #: R2.3 the game ends after a round at whose end a score exceeds this.
    limit: int = 125
    #: R2.4 guard: the game ends after this many rounds.
    max_rounds: int = 200
    #: R3.1 cards dealt to each player.
    hand_size: int = 5
    #: R3.2 "rotate" (round r starts at seat (r-1) mod n) or "winner"
    #: (previous round's winner starts; rotate when there is none).
    first_player: str = "rotate"
    #: R8.3 a score of exactly this after the addition becomes 0; None: off.
    burn: int | None = 125
    #: R8.4 guard: a round ends with no winner after this many moves.
    max_moves: int = 1000
    #: Variant "jack finish": points taken off the winner per jack in the
    #: final group of the winning move (0: off; the variant uses 20).
    jack_finish: int = 0
    #: Variant "stacked effects": the whole final group hits the next player.
    stacked_effects: bool = False
    #: Variant "teams": 4 or 6 players, seat i partners seat i + n/2.
    teams: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "points", _frozen_points(self.points))
        if self.first_player not in ("rotate", "winner"):
            raise ValueError("R3.2: first_player must be 'rotate' or 'winner'")
        for name, (lo, hi) in BOUNDS.items():
            value = getattr(self, name)
            if name == "burn" and value is None:
                continue
            if type(value) is not int:
                raise ValueError(f"{name} must be a whole number, not {value!r:.40}")
            if not lo <= value <= hi:
                raise ValueError(f"{RULE_OF.get(name, '')}{name} must be {lo} to {hi}, not {value}")
        for name in ("stacked_effects", "teams"):
            if type(getattr(self, name)) is not bool:
                raise ValueError(f"{name} must be true or false, not {getattr(self, name)!r:.40}")

    def _settings(self) -> tuple[Any, ...]:
        return tuple((f.name, getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "points") + (
            ("points", tuple(sorted(self.points.items()))),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rules):
            return NotImplemented
        return self._settings() == other._settings()

    def __hash__(self) -> int:
        return hash(self._settings())

    def check_players(self, n: int) -> None:
        """Raise ``ValueError`` when ``n`` players cannot play under these rules."""
        if not 2 <= n <= 6:
            raise ValueError(f"R2.1: 2 to 6 players sit at a table, not {n}")
        if n * self.hand_size + 1 > 36:
            raise ValueError(f"R3.1: {n} hands of {self.hand_size} and an opening card do not fit in 36 cards")
        if self.teams and n not in (4, 6):
            raise ValueError("teams variant: 4 or 6 players")

    def card_points(self, rank: str) -> int:
        """R1.3 points of one card of ``rank``."""
        return self.points[rank]

    def replace(self, **changes: Any) -> Rules:
        """A copy with some settings changed (unknown names raise ``TypeError``)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain data, as written to game records and databases (a new dict each call)."""
        return {**self._settings_dict, "points": dict(self.points)}

    @functools.cached_property
    def _settings_dict(self) -> dict[str, Any]:
        """Every setting by name, worked out once (the settings are frozen; every game's record
        header holds them): :meth:`to_dict` copies it."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """Build from :meth:`to_dict` output; unknown keys raise ``ValueError``."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown rule settings: {', '.join(sorted(unknown))}")
        return cls(**dict(data))

    def changed(self) -> dict[str, Any]:
        """Settings that differ from the contest defaults."""
        base = Rules().to_dict()
        return {k: v for k, v in self.to_dict().items() if k != "name" and base[k] != v}


CONTEST = Rules()


def parse_setting(text: str) -> tuple[str, Any]:
    """Parse a ``--rule key=value`` option into a settings pair.

    >>> parse_setting("limit=101")
    ('limit', 101)
    """
    if "=" not in text:
        raise ValueError(f"rule setting {_short(text)} is not KEY=VALUE")
    key, value = (s.strip() for s in text.split("=", 1))
    key = key.replace("-", "_")
    fields = {f.name: f for f in dataclasses.fields(Rules)}
    if key not in fields or key == "name":
        raise ValueError(f"unknown rule setting {_short(key)}; known: {', '.join(k for k in fields if k != 'name')}")
    default = getattr(CONTEST, key)
    if key == "points":
        table = {}
        for part in value.split(","):
            rank, colon, pts = (s.strip() for s in part.partition(":"))
            try:
                if not colon or not rank:
                    raise ValueError
                table[rank.lower()] = int(pts)
            except ValueError:
                raise ValueError(f"points takes RANK:POINTS pairs like 7:5,a:20, not {_short(part)}") from None
        return key, table
    if key == "burn" and value.lower() in ("none", "off", "no", ""):
        return key, None
    if isinstance(default, bool):
        if value.lower() in ("1", "true", "yes", "on"):
            return key, True
        if value.lower() in ("0", "false", "no", "off"):
            return key, False
        raise ValueError(f"{key} takes true or false, not {_short(value)}")
    if isinstance(default, int) or key == "burn":
        try:
            return key, int(value)
        except ValueError:
            raise ValueError(f"{key} takes a whole number, not {_short(value)}") from None
    return key, value


def _short(text: str) -> str:
    """``text`` quoted for a one-line message, cut when long."""
    return repr(text if len(text) <= 40 else text[:37] + "...")
