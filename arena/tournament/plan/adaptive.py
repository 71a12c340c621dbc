"""Adaptive tournaments: play rounds of duplicate blocks until the order is settled.

``arena tournament ... --until-separated`` plays a first round (every table of
the schedule, ``--games`` deals each, default 1), then rounds of a few
duplicate blocks at tables chosen where they help most, until every adjacent
pair of the standings (or each of the top K places, or each NEW-vs-field
pair of a gauntlet) is *separated*, or ``--budget`` games are spent. The
schedule may hold tables of several sizes (``--players 2-6``): a block's
difference is taken at its own table, whatever its size (docs/RULINGS.md 139).

**The sequential method.** Two bots at one table in a block got the same
cards and opponents; the difference of their block scores (mean normalised
placement over the block's rotations) lies in [-1, 1]. Per pair of bots, a
:class:`~arena.tournament.results.stats.MixtureTest` bets on the sign of the mean of those
differences, block after block, with a fixed mixture of constant stakes (so
it uses the size of each difference, not only its sign). Its two wealths
(betting "above 0" and "below 0") are nonnegative supermartingales while
their nulls hold, so by Ville's inequality ``1 / max wealth`` is a p-value
valid at every look at once. The claims - "a above b" or "b above a" for
every pair that could be compared: all pairs for an order (the adjacent pairs
are themselves picked from the data), the NEW-vs-field pairs in a gauntlet -
are made by Holm's step-down on those p-values (:meth:`State._step_down`):
the first claim needs what Bonferroni over all of them needs, each claim
made lowers the bar for the rest, and the chance that any claim is ever
wrong stays at most ``1 - confidence`` whatever the number of looks, the
stopping time, or the way later tables were chosen from earlier results
(each block's table is fixed before its games are played). So at
``--confidence 0.95`` the chance that the tournament stops claiming an order
that is wrong anywhere is at most 5%.

**Rounds.** A round holds ``round_blocks`` blocks (at least 4, and enough for
every bot to sit once) while that many comparisons are open, and one block per
open comparison near the end, so the run stops soon after the last pair settles.
A pair still open after :data:`SPREAD_AFTER` blocks is spread over all the
tables it can meet at (a pair's difference can depend on the other seats).

**Methods.** The method is stored with the tournament's settings, and a
database is always replayed with its own: :data:`METHOD` for new
tournaments; :data:`LEGACY_METHOD` (online-Newton stakes, rounds of a fixed
size) for databases made before it, which resume and report as they were.

**Determinism.** Every decision is a function of the stored results alone:
round ``r`` is planned from the games of rounds ``< r``, and a game's seed
and seating follow from its key. A resumed run (after Ctrl-C or kill -9)
rebuilds the same rounds from the database and plays what is missing; any
backend gives the same games. ``--budget`` only says how much of the plan is
played (whole blocks, in order), so it may change between runs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..db.rows import LEGACY_METHOD as LEGACY_METHOD
from ..db.rows import METHOD as METHOD
from ..db.rows import METHODS as METHODS
from ..results.finished import GameResult
from ..results.stats import MixtureTest, SignTest, pair_alpha
from .schedule import GameKey

#: Deals one table may get; game ids are ``(table * DEAL_CAP + deal) * size + rotation + 1``.
DEAL_CAP = 1_000_000
#: Blocks after which a pair still open is spread over all the tables it can meet at
#: (none more than twice the least-used one's deals, plus 2): a concentrated schedule can
#: otherwise keep a pair at the one table where its difference happens to be about 0.
SPREAD_AFTER = 500
#: Without ``--budget``: this many times the first round's games.
DEFAULT_BUDGET_ROUNDS = 200
# METHOD (new tournaments: mixture betting, Holm's step-down, rounds that shrink at the end) and
# LEGACY_METHOD (databases made before it: online-Newton betting, Bonferroni, rounds of a fixed
# size) are defined with the stored design's checks, in .dbrows.


@dataclass(frozen=True)
class Design:
    """What decides an adaptive tournament's rounds (stored with its settings)."""

    bots: int
    size: int  # the largest table size (the only one, but for a schedule of several sizes)
    tables: tuple[tuple[int, ...], ...]  # the tables rounds may use (the schedule's, size by size)
    first_deals: int = 1
    confidence: float = 0.95
    top: int | None = None
    gauntlet: bool = False
    method: str = METHOD

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown sequential method {self.method!r} (this arena knows {', '.join(METHODS)})")

    @cached_property
    def where(self) -> tuple[tuple[int, int], ...]:
        """Each table's (size, number among the tables of its size): its games' keys."""
        seen: dict[int, int] = {}
        out = []
        for table in self.tables:
            n = len(table) or self.size
            out.append((n, seen.get(n, 0)))
            seen[n] = seen.get(n, 0) + 1
        return tuple(out)

    @property
    def several(self) -> bool:
        """Whether the tables are of more than one size (their games are numbered otherwise)."""
        return len({n for n, _ in self.where}) > 1

    def games_of(self, blocks: Sequence[Block]) -> int:
        """The games ``blocks`` hold: one per seat rotation of each."""
        return sum(self.where[t][0] for t, _ in blocks)

    def test(self) -> MixtureTest | SignTest:
        """A fresh per-pair test of this design's method."""
        return MixtureTest(self.alpha) if self.method == METHOD else SignTest(self.alpha, cap=0.75)

    @property
    def round_blocks(self) -> int:
        """Duplicate blocks per round after the first."""
        return max(4, math.ceil(self.bots / self.size))

    @property
    def family(self) -> int:
        """Comparisons the error rate is shared among (each in two directions in Holm's step-down)."""
        return self.bots - 1 if self.gauntlet else math.comb(self.bots, 2)

    @property
    def alpha(self) -> float:
        return pair_alpha(self.confidence, self.family)

    @property
    def first_round_games(self) -> int:
        return sum(n for n, _ in self.where) * self.first_deals

    def settings(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "confidence": self.confidence,
            "top": self.top,
            "gauntlet": self.gauntlet,
            "first_deals": self.first_deals,
            "round_blocks": self.round_blocks,
        }

    def default_budget(self) -> int:
        return DEFAULT_BUDGET_ROUNDS * self.first_round_games


def game_id(key: GameKey, several: bool = False) -> int:
    """The database row id of an adaptive tournament's game (less 1); ``several``: of a schedule of
    several table sizes (up to 7 seats; one size keeps the numbering its databases were made with)."""
    if several:
        return ((key.table * DEAL_CAP + key.deal) * 8 + key.size) * 8 + key.rotation
    return (key.table * DEAL_CAP + key.deal) * key.size + key.rotation


Block = tuple[int, int]  # (table, deal)


@dataclass
class PairReport:
    """One comparison as reported: ``upper`` placed above ``lower`` in the order."""

    upper: int
    lower: int
    blocks: int
    mean: float | None  # upper's mean paired block-score difference
    p_value: float  # anytime-valid
    separated: bool
    verdict: str  # "separated" ("better"/"worse" in a gauntlet), "not yet", "reversed", "no shared table"


@dataclass
class State:
    """The decisions of an adaptive tournament, replayed from stored results."""

    design: Design
    rounds: list[list[Block]] = field(default_factory=list)
    deals: list[int] = field(default_factory=list)  # deals used per table
    seats: list[int] = field(default_factory=list)  # blocks each bot sat in
    score_sum: list[float] = field(default_factory=list)
    tests: dict[tuple[int, int], MixtureTest | SignTest] = field(default_factory=dict)
    sums: dict[tuple[int, int], float] = field(default_factory=dict)
    absorbed: int = 0  # blocks absorbed, in plan order
    status: str = "playing"  # "playing", "separated", "budget"
    decided: dict[tuple[int, int], int] = field(default_factory=dict)  # +1: a above b, -1: below, 0: open
    rejected: int = 0  # directional claims made so far (the step-down's count)

    def __post_init__(self) -> None:
        d = self.design
        self.deals = [0] * len(d.tables)
        self.seats = [0] * d.bots
        self.score_sum = [0.0] * d.bots
        for pair in itertools.combinations(range(d.bots), 2):
            self.tests[pair] = d.test()
            self.sums[pair] = 0.0
            self.decided[pair] = 0
        self._family = [p for p in self.tests if not d.gauntlet or 0 in p]
        first = [(t, deal) for t in range(len(d.tables)) for deal in range(d.first_deals)]
        self._add_round(first)

    # -- the plan ---------------------------------------------------------------
    def _add_round(self, blocks: list[Block]) -> None:
        for t, deal in blocks:
            self.deals[t] = max(self.deals[t], deal + 1)
        self.rounds.append(blocks)

    def plan(self) -> list[Block]:
        """Every block planned so far, in order."""
        return [b for r in self.rounds for b in r]

    def keys(self, block: Block) -> list[GameKey]:
        size, table = self.design.where[block[0]]
        return [GameKey(size, table, block[1], r) for r in range(size)]

    # -- absorbing results ------------------------------------------------------
    def absorb(self, block: Block, games: Sequence[GameResult]) -> None:
        """One finished block's games (all rotations)."""
        k = self.design.where[block[0]][0]
        per: dict[int, list[float]] = {}
        for g in games:
            for bot, place, *_ in g.seats:
                per.setdefault(bot, []).append((k - place) / (k - 1))
        scores = {bot: math.fsum(v) / len(v) for bot, v in per.items()}
        for bot, s in scores.items():
            self.seats[bot] += 1
            self.score_sum[bot] += s
        for a, b in itertools.combinations(sorted(scores), 2):
            diff = scores[a] - scores[b]
            self.tests[(a, b)].add(diff)
            self.sums[(a, b)] += diff
        self.absorbed += 1
        if self.design.method == LEGACY_METHOD:
            for pair, test in self.tests.items():
                self.decided[pair] = test.decided
        else:
            self._step_down()

    def _step_down(self) -> None:
        """Holm's step-down over the family's directional claims ("a above b" and "b above a"
        for each compared pair: ``M = 2 * family`` hypotheses), on anytime-valid p-values
        ``1 / (running maximum of a side's wealth)``: the strongest open claim is made while its
        p-value is at most ``(1 - confidence) / (M - claims made so far)``. Claims stay made.

        Why the error rate holds under any number of looks: let ``m0`` directional claims be
        false ones (at least half of ``M``). Before the first false claim only true ones were
        made, at most ``M - m0``, so the first false claim needs a p-value at most
        ``(1 - confidence) / m0``; by Ville's inequality each of the ``m0`` wealths ever gets
        there with probability at most ``(1 - confidence) / m0``, so some false claim is
        ever made with probability at most ``1 - confidence``. The first claim needs what
        Bonferroni needs; each claim made lowers the bar for the rest.
        """
        d = self.design
        alpha = 1 - d.confidence
        hypotheses = 2 * len(self._family)
        while True:
            best: tuple[float, tuple[int, int], int] | None = None
            for pair in self._family:
                if self.decided[pair]:
                    continue
                test = self.tests[pair]
                side = 0 if test.best[0] >= test.best[1] else 1
                if best is None or test.best[side] > best[0]:
                    best = (test.best[side], pair, side)
            if best is None or best[0] < math.log((hypotheses - self.rejected) / alpha):
                return
            self.decided[best[1]] = 1 if best[2] == 0 else -1
            self.rejected += 1

    def score(self, bot: int) -> float:
        return self.score_sum[bot] / self.seats[bot] if self.seats[bot] else 0.0

    def order(self) -> list[int]:
        """Bots best first by score (mean block score), as the standings rank them."""
        return sorted(range(self.design.bots), key=lambda b: (self.seats[b] == 0, -self.score(b), b))

    # -- decisions --------------------------------------------------------------
    def comparisons(self) -> list[tuple[int, int]]:
        """The (upper, lower) pairs the tournament must separate, in the current order."""
        d = self.design
        if d.gauntlet:
            return [(0, f) for f in range(1, d.bots)]
        order = self.order()
        last = d.bots - 1 if d.top is None else min(d.top, d.bots - 1)
        return [(order[i], order[i + 1]) for i in range(last)]

    def report(self, pair: tuple[int, int]) -> PairReport:
        upper, lower = pair
        a, b = min(pair), max(pair)
        test = self.tests[(a, b)]
        sign = 1 if upper == a else -1
        mean = sign * self.sums[(a, b)] / test.n if test.n else None
        if not any(a in t and b in t for t in self.design.tables):
            verdict = "no shared table"
        elif self.decided[(a, b)] == 0:
            verdict = "not yet"
        elif self.design.gauntlet:
            verdict = "better" if self.decided[(a, b)] == sign else "worse"
        else:
            verdict = "separated" if self.decided[(a, b)] == sign else "reversed"
        settled = verdict in ("separated", "better", "worse")
        return PairReport(upper, lower, test.n, mean, test.p_value, settled, verdict)

    def uncertain(self) -> list[tuple[int, int]]:
        """Comparisons not separated yet that more games can help."""
        return [p for p in self.comparisons() if self.report(p).verdict in ("not yet", "reversed")]

    def next_round(self) -> list[Block]:
        """Blocks at the tables that hold the most unsettled pairs that have had the fewest
        blocks, the other seats going to the bots that sat least (ties: the table with the
        fewest deals, then the lowest number), so seats and opponents stay balanced."""
        d = self.design
        todo = self.uncertain()
        count = {p: float(self.tests[(min(p), max(p))].n) for p in todo}
        deals = list(self.deals)
        seats = list(self.seats)
        rank = {p: i for i, p in enumerate(todo)}
        blocks: list[Block] = []
        size = d.round_blocks if d.method == LEGACY_METHOD else min(d.round_blocks, len(todo))
        for _ in range(size):
            target = min(todo, key=lambda p: (count[p], rank[p]))
            candidates = [
                t
                for t, table in enumerate(d.tables)
                if target[0] in table and target[1] in table and deals[t] < DEAL_CAP
            ]
            if not candidates:
                break
            if d.method == METHOD and count[target] > SPREAD_AFTER:
                # A pair this slow may be meeting at a table where it is (nearly) even: spread
                # it over all the tables it can meet at, as the round robin does.
                least = min(deals[t] for t in candidates)
                candidates = [t for t in candidates if deals[t] <= 2 * least + 2]

            def merit(t: int) -> tuple[int, int, int, int]:
                table = d.tables[t]
                covered = sum(1 for p in todo if p[0] in table and p[1] in table)
                return (-covered, sum(seats[b] for b in table), deals[t], t)

            t = min(candidates, key=merit)
            blocks.append((t, deals[t]))
            deals[t] += 1
            for p in todo:
                if p[0] in d.tables[t] and p[1] in d.tables[t]:
                    count[p] += 1
            for b in d.tables[t]:
                seats[b] += 1
        return blocks


class AdaptivePlanner:
    """Feeds stored games to a :class:`State` and advances it round by round; what a
    run plays next (the :class:`~arena.tournament.loop.Planner` of an adaptive run) and what ``standings``
    reports both come from here."""

    rounds = True

    def __init__(
        self, design: Design, budget: int | None = None, on_round: Callable[[State, int], None] | None = None
    ) -> None:
        self.state = State(design)
        self.budget = design.default_budget() if budget is None else budget
        self.games: dict[GameKey, GameResult] = {}
        self.on_round = on_round

    def index(self, key: GameKey) -> int:
        return game_id(key, self.state.design.several)

    def resume(self, db: Any) -> int:
        from ..db.database import read_games

        stored = read_games(db.conn)
        self.feed(stored)
        return len(stored)

    def more(self) -> list[GameKey]:
        nxt = self.advance()
        if self.on_round:
            self.on_round(self.state, len(self.games))
        return nxt

    def feed(self, games: Sequence[GameResult]) -> None:
        for g in games:
            self.games.setdefault(g.key, g)

    def _complete(self, block: Block) -> list[GameResult] | None:
        rows = [self.games.get(k) for k in self.state.keys(block)]
        return None if any(r is None for r in rows) else rows  # type: ignore[return-value]

    def advance(self) -> list[GameKey]:
        """Absorb finished blocks in plan order, plan rounds as they complete; the keys of
        the current round still to play within the budget ([] when the tournament is over)."""
        s = self.state
        while True:
            plan = s.plan()
            while s.absorbed < len(plan):
                rows = self._complete(plan[s.absorbed])
                if rows is None:
                    break
                s.absorb(plan[s.absorbed], rows)
            if s.absorbed < len(plan):
                return self._missing(plan[s.absorbed :])
            if not s.uncertain():
                s.status = "separated"
                return []
            blocks = self._within(s.next_round(), self.budget - s.design.games_of(plan))
            if not blocks:
                s.status = "budget"
                return []
            s._add_round(blocks)

    def _within(self, blocks: Sequence[Block], room: int) -> list[Block]:
        """The first of ``blocks`` that hold at most ``room`` games (whole blocks, in order)."""
        out: list[Block] = []
        for b in blocks:
            room -= self.state.design.where[b[0]][0]
            if room < 0:
                break
            out.append(b)
        return out

    def _missing(self, blocks: Sequence[Block]) -> list[GameKey]:
        s = self.state
        played = s.design.games_of(s.plan()[: s.absorbed])
        keys = [k for b in self._within(blocks, self.budget - played) for k in s.keys(b) if k not in self.games]
        if not keys:
            s.status = "budget"
        return keys


def design_of(settings: dict[str, Any], bots: int, tables: Sequence[tuple[int, ...]]) -> Design:
    """The design stored in a database's settings (``tables``: size by size, as stored)."""
    a = settings["adaptive"]
    return Design(
        bots,
        max(int(n) for n in settings["sizes"]),
        tuple(tuple(t) for t in tables),
        int(a["first_deals"]),
        float(a["confidence"]),
        a.get("top"),
        bool(a.get("gauntlet")),
        str(a.get("method", LEGACY_METHOD)),
    )


@dataclass
class AdaptiveResult:
    played: int
    stored: int
    elapsed: float
    status: str  # "separated", "budget", "interrupted"
    state: State
    signum: int = 2  # what interrupted it (SIGINT or SIGTERM)

    @property
    def rate(self) -> float:
        return self.played / self.elapsed if self.elapsed > 0 else 0.0


def run(
    p: Any,
    design: Design,
    db_path: str,
    backend: Callable[..., Any],
    *,
    budget: int | None,
    replays: str | None = None,
    force: bool = False,
    on_start: Callable[[int], None] | None = None,
    on_round: Callable[[State, int], None] | None = None,
    sandbox: dict[str, Any] | None = None,
) -> AdaptiveResult:
    """Play ``p`` (a :class:`~arena.tournament.plan.plan.Plan`) adaptively into ``db_path``: the
    tournament loop (:func:`arena.tournament.loop.play`) fed by an :class:`AdaptivePlanner`.

    :raises TournamentDBError: the database is foreign, damaged or of another tournament.
    """
    from ..loop import play

    planner = AdaptivePlanner(design, budget, on_round)

    def started() -> None:
        if on_start:
            on_start(len(planner.games))

    settings = {**p.settings, "adaptive": design.settings()}
    out = play(
        p, db_path, backend, planner, settings=settings, replays=replays, force=force, sandbox=sandbox, on_start=started
    )
    status = "interrupted" if out.stopped and planner.state.status == "playing" else planner.state.status
    return AdaptiveResult(out.played, len(planner.games), out.elapsed, status, planner.state, out.signum)
