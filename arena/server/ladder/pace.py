"""How the ladder spends its games: tables chosen by what they would teach, at a pace the organiser
sets, slower as the ratings settle, paused and resumed by the organiser (docs/server.md, "Running for
a week"; docs/RULINGS.md 150-151).

*Information.* A game between two versions teaches most when their ratings are uncertain and close.
For versions a and b, with OpenSkill's performance spread beta, ``c2 = 2 beta^2 + sigma_a^2 +
sigma_b^2`` is the variance of their difference in performance; the share of it that comes from
not knowing their ratings is ``(sigma_a^2 + sigma_b^2) / c2``, and ``exp(-(mu_a - mu_b)^2 / (2 c2))``
is how open the game is (1 when equal, near 0 when one surely wins). Their product,
:func:`pair_information`, is 0.8 for two new versions and about 0.05 for two settled, equal ones
(sigma 1). The matchmaker (:func:`pick`) weights the focus version by its information against the
field (and a little towards the new), and seats beside it versions drawn by their information with it.

*Pace.* ``games_per_bot_hour`` (``arena serve --pace``) is the most each version plays an hour on
average: a block of k seats is k games of k versions, k^2 of those games, so after a block the
ladder waits ``k^2 * 3600 / (pace * versions)`` seconds, divided by the table's information
relative to two new versions (at least :data:`SETTLED_SHARE`): the ladder plays at its full pace
while ratings are uncertain, and slows to a tenth of it as they settle. ``cpu``
(``--ladder-cpu``) is the share of the time a ladder worker may be busy: after a block that took
t seconds, it rests ``t * (1 / cpu - 1)``.

*Pause.* The contest setting ``ladder_paused`` (the desk's button, ``arena contest pause|resume``):
no block starts while it is set; the block playing ends first (at most six games).
"""

from __future__ import annotations

import json
import math
import random
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..contest.rounds import Rated
from ..store import database as store
from ..store import events
from .rating import START_MU, START_SIGMA
from .retention import Retention, human

#: OpenSkill's performance spread (its default beta: sigma / 2 of a new rating).
BETA = START_SIGMA / 2
#: The most games a version plays an hour, on average, unless ``arena serve --pace`` says otherwise.
DEFAULT_PACE = 120.0
#: The least share of the pace the ladder plays, however settled the ratings are.
SETTLED_SHARE = 0.1
#: The contest setting that pauses the ladder ("1") or lets it play ("0" or absent).
PAUSED = "ladder_paused"
#: The contest setting where the ladder says what it is doing (JSON), for the desk.
STATE = "ladder_state"


def pair_information(a: Rated, b: Rated) -> float:
    """What a game between ``a`` and ``b`` would teach, 0 to 1 (see the module's docstring)."""
    va, vb = a.sigma * a.sigma, b.sigma * b.sigma
    c2 = 2 * BETA * BETA + va + vb
    return (va + vb) / c2 * math.exp(-((a.mu - b.mu) ** 2) / (2 * c2))


@dataclass(frozen=True)
class _New:
    submission: int = 0
    mu: float = START_MU
    sigma: float = START_SIGMA
    games: int = 0


#: The information of a game between two new versions: the ladder's full pace.
FRESH = pair_information(_New(), _New())


def table_information(table: Sequence[Rated]) -> float:
    """The mean information of the table's pairs (0 for a table of fewer than two)."""
    pairs = [(a, b) for i, a in enumerate(table) for b in table[i + 1 :]]
    return sum(pair_information(a, b) for a, b in pairs) / len(pairs) if pairs else 0.0


R = TypeVar("R", bound=Rated)


def pick(entrants: Sequence[R], rng: random.Random, size: int, may_focus: Callable[[R], bool] | None = None) -> list[R]:
    """A table of ``size`` (at most all): a focus (one that ``may_focus``, when given) weighted by its
    information against the others (the new a little more), then rivals drawn without replacement by
    their information with it."""
    field = list(entrants)
    candidates = [e for e in field if may_focus is None or may_focus(e)]
    if len(field) < 2 or size < 2 or not candidates:
        return []
    weights = [
        max(sum(pair_information(e, o) for o in field if o is not e) / (len(field) - 1), 1e-9)
        * (1.0 + 4.0 / (1 + max(e.games, 0)))
        for e in candidates
    ]
    focus = rng.choices(candidates, weights=weights)[0]
    # Weighted sampling without replacement (Efraimidis-Spirakis): the largest u^(1/w) win.
    keyed = sorted(
        (o for o in field if o is not focus),
        key=lambda o: rng.random() ** (1.0 / max(pair_information(focus, o), 1e-9)),
        reverse=True,
    )
    return [focus, *keyed[: size - 1]]


@dataclass(frozen=True)
class Pace:
    """How fast the ladder plays (``arena serve --pace --ladder-cpu``)."""

    #: The most games a version plays an hour, on average (0: no pace, as fast as the workers go).
    games_per_bot_hour: float = DEFAULT_PACE
    #: The share of the time a ladder worker may be busy (1: always).
    cpu: float = 1.0
    #: This worker's share of the pace (1 / the ladder workers).
    share: float = 1.0

    def wait_after(self, seats: int, versions: int, information: float) -> float:
        """Seconds to wait after starting a block of ``seats`` among ``versions`` playing."""
        if self.games_per_bot_hour <= 0 or versions < 1 or seats < 1:
            return 0.0
        factor = min(1.0, max(SETTLED_SHARE, information / FRESH))
        return seats * seats * 3600.0 / (self.games_per_bot_hour * self.share * versions) / factor

    def rest_after(self, busy: float) -> float:
        """Seconds to rest after ``busy`` seconds of work, to keep to :attr:`cpu`."""
        return max(0.0, busy) * (1.0 / self.cpu - 1.0) if 0 < self.cpu < 1 else 0.0


class Pacer:
    """When this ladder worker may start its next block (``clock``: seconds, monotonic)."""

    def __init__(self, pace: Pace, clock: Callable[[], float] = time.monotonic) -> None:
        self.pace = pace
        self.clock = clock
        self.next_at = 0.0
        self._began = 0.0

    def ready(self) -> bool:
        return self.clock() >= self.next_at

    def started(self, seats: int, versions: int, information: float) -> None:
        self._began = now = self.clock()
        self.next_at = max(self.next_at, now + self.pace.wait_after(seats, versions, information))

    def ended(self) -> None:
        now = self.clock()
        self.next_at = max(self.next_at, now + self.pace.rest_after(now - self._began))


def paused(db: sqlite3.Connection) -> bool:
    return store.setting(db, PAUSED) == "1"


def set_paused(db: sqlite3.Connection, value: bool) -> bool:
    """Pause (or resume) the ladder; whether that changed anything."""
    with store.writing(db):
        was = store.setting(db, PAUSED) == "1"
        db.execute("INSERT OR REPLACE INTO contest VALUES (?, ?)", (PAUSED, "1" if value else "0"))
    return was != value


def describe(pace: Pace) -> str:
    """The pace in words, for the log and the desk."""
    if pace.games_per_bot_hour <= 0:
        speed = "no pace (as fast as the workers play)"
    else:
        speed = f"at most {pace.games_per_bot_hour:g} games per bot an hour (fewer as ratings settle)"
    return speed + (f", busy at most {pace.cpu:.0%} of the time" if pace.cpu < 1 else "")


def note(db: sqlite3.Connection, text: str, level: str = "info") -> None:
    """Log a change of the ladder's state (:mod:`..store.events`)."""
    events.say(db, f"ladder: {text}", level)


class Gate:
    """Whether a ladder worker may start a block now: not paused, room on the disk
    (:class:`.retention.Retention`), and its pace kept (:class:`Pacer`). Each change of what it
    does is one line in the log and the contest setting :data:`STATE` (for the desk)."""

    def __init__(self, db: sqlite3.Connection, pacer: Pacer, retention: Retention | None = None) -> None:
        self.db, self.pacer, self.retention = db, pacer, retention
        self.state = ""
        self.round = 0

    def open(self) -> bool:
        number = int(store.setting(self.db, "round") or 1)
        if number != self.round:
            if self.round:
                note(self.db, f"round {number} is open: new versions play its field under its rules")
            self.round = number
        if paused(self.db):
            self._now("paused", "paused by the organiser: no new game until it is resumed")
            return False
        if self.retention is not None and not self.retention.tick():
            kept = self.retention
            self._now(
                "full",
                f"stopped at the disk budget ({human(kept.budget or 0)}): the contest folder holds "
                f"{human(kept.size)} and keeps {human(kept.needed - kept.size)} free for the database to write "
                "in; nothing more can be reduced (raise --disk-budget or lower --keep-games); it plays again "
                "when there is room",
                "warning",
            )
            return False
        if self.state in ("paused", "full", ""):
            self._now("playing", "resumed" if self.state == "paused" else "playing")
        return self.pacer.ready()

    def _now(self, state: str, text: str, level: str = "info") -> None:
        if state == self.state:
            return
        first = not self.state
        self.state = state
        if state == "playing" and first:
            text = f"playing, {describe(self.pacer.pace)}"
            if self.retention is not None:
                text += f"; each version's latest {self.retention.keep} games kept whole"
                if self.retention.budget is not None:
                    text += f"; disk budget {human(self.retention.budget)}"
        note(self.db, text, level)
        try:
            store.set_setting(self.db, STATE, json.dumps({"state": state, "since": time.time(), "text": text}))
        except sqlite3.Error:
            pass

    def started(self, table: Sequence[Rated], versions: int) -> None:
        """A block of ``table`` was made, among ``versions`` playing."""
        self.pacer.started(len(table), versions, table_information(table))

    def ended(self) -> None:
        self.pacer.ended()
