"""``arena play A B --sprt ELO0,ELO1``: play duplicate pairs of games until a sequential
probability ratio test decides whether A is at most ELO0 or at least ELO1 Elo stronger than B.

**Pairs.** Games come in pairs on one deal with the seats swapped (A deals first in one
game, B in the other), so the deal's luck largely cancels within a pair - what
fastchess and cutechess get from playing each opening twice with colours reversed.

**The Elo model.** In a 2-player game a bot's game score is 1 for a win (placed 1, the
other placed 2), 1/2 when both are placed 1 (equal final scores share the better
place, R9.1), 0 for a loss. The Elo difference of A over B is
``400 log10(s / (1 - s))`` with ``s`` A's expected game score over deals and seatings:
the *logistic* Elo of chess (fastchess's ``model=logistic``, Fishtest's "logistic Elo").

**The test.** A pair's outcome is one of five: A's points in the pair, 0, 1/2, 1, 3/2 or 2
(a win and a loss and two draws both give 1, as fastchess counts them). The test is the
*pentanomial GSPRT* (generalized SPRT) of Fishtest and fastchess (M. Van den Bergh,
"Comments on normalized Elo"): for each hypothesis the maximum-likelihood distribution
of the five outcomes whose mean pair score matches that hypothesis' Elo
(``s0 = score(ELO0)``, ``s1 = score(ELO1)``) is fitted to the counts so far, and the
log-likelihood ratio ``LLR = N sum_i phat_i log(p1_i / p0_i)`` is compared with Wald's
bounds ``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)``: below the lower
one H0 (elo <= ELO0) is accepted, above the upper one H1 (elo >= ELO1). Empty outcome
classes count as 1/1000 of a pair, as fastchess regularises them. Like Wald's SPRT
its error rates hold approximately (the bounds are Wald's, the likelihood is
profiled), which chess testing has measured over millions of tests; docs/sprt.md
says more and how it differs from the tournament's anytime-valid tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..game.seeds import GameSeeds, game_seeds

#: A's points in a pair of games, one bucket each (a win and a loss share 1 with two draws).
PAIR_POINTS = (0.0, 0.5, 1.0, 1.5, 2.0)
#: What an empty outcome class counts as (as fastchess regularises).
EMPTY = 1e-3
#: Games ``arena play --sprt`` plays at most without ``--games``.
DEFAULT_CAP = 20_000
MODEL = "pentanomial GSPRT, logistic Elo"


def elo_to_score(elo: float) -> float:
    """Expected game score of a bot ``elo`` Elo stronger (logistic)."""
    return 1 / (1 + 10 ** (-elo / 400))


def score_to_elo(score: float) -> float:
    """The logistic Elo difference of an expected game score in (0, 1) (infinite at the ends)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def _mle(probs: Sequence[float], scores: Sequence[float], s: float) -> list[float]:
    """The distribution over ``scores`` with mean ``s`` closest in likelihood to ``probs``
    (Van den Bergh's proposition: ``p_i = phat_i / (1 + theta (a_i - s))``, ``theta`` the
    root of ``sum phat_i (a_i - s) / (1 + theta (a_i - s)) = 0``), found by bisection."""
    lo, hi = -1 / (max(scores) - s), -1 / (min(scores) - s)

    def f(theta: float) -> float:  # decreasing in theta on (lo, hi)
        return math.fsum(p * (a - s) / (1 + theta * (a - s)) for p, a in zip(probs, scores, strict=True))

    a, b = lo + 1e-12 * (hi - lo), hi - 1e-12 * (hi - lo)
    for _ in range(200):
        mid = (a + b) / 2
        if f(mid) > 0:
            a = mid
        else:
            b = mid
        if b - a < 1e-15:
            break
    theta = (a + b) / 2
    return [p / (1 + theta * (x - s)) for p, x in zip(probs, scores, strict=True)]


def gsprt_llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The pentanomial GSPRT's log-likelihood ratio of H1 (elo = ``elo1``) to H0 (``elo0``)
    for ``counts`` of pairs by A's points (:data:`PAIR_POINTS`); 0 before any pair."""
    if sum(counts) == 0:
        return 0.0
    regular = [c if c else EMPTY for c in counts]
    total = math.fsum(regular)
    probs = [c / total for c in regular]
    scores = [x / 2 for x in PAIR_POINTS]  # the pair's mean game score
    p0 = _mle(probs, scores, elo_to_score(elo0))
    p1 = _mle(probs, scores, elo_to_score(elo1))
    return total * math.fsum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, p0, p1, strict=True))


@dataclass(frozen=True)
class SprtSpec:
    """What ``--sprt ELO0,ELO1`` with ``--alpha``/``--beta`` asks."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"--sprt ELO0,ELO1 needs ELO0 below ELO1; {self.elo0:g},{self.elo1:g} given")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < value < 0.5:
                raise ValueError(f"--{name} is an error rate above 0 and below 0.5, not {value:g}")
        for value in (self.elo0, self.elo1):
            if not -2000 <= value <= 2000:
                raise ValueError(f"--sprt Elo bounds lie within -2000 and 2000, not {value:g}")

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR."""
        return math.log((1 - self.beta) / self.alpha)


def parse_sprt(text: str) -> tuple[float, float]:
    """``ELO0,ELO1`` as two numbers. :raises ValueError: with the one-line reason."""
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        elo0, elo1 = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"--sprt takes ELO0,ELO1 like 0,10, not {text!r}") from None
    if not all(math.isfinite(x) for x in (elo0, elo1)):
        raise ValueError(f"--sprt takes two finite numbers, not {text!r}")
    return elo0, elo1


@dataclass
class Sprt:
    """The test's state: pentanomial counts of A's points per finished pair."""

    spec: SprtSpec
    counts: list[int] = field(default_factory=lambda: [0] * len(PAIR_POINTS))
    decision: str | None = None  # "H0" or "H1" once the LLR crosses a bound; then it stays
    llr: float = 0.0

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def add_pair(self, points: float) -> str | None:
        """One pair's points for A (0, 0.5, 1, 1.5 or 2); the decision (None: play on)."""
        self.counts[PAIR_POINTS.index(points)] += 1
        if self.decision is None:
            self.llr = gsprt_llr(self.counts, self.spec.elo0, self.spec.elo1)
            if self.llr >= self.spec.upper:
                self.decision = "H1"
            elif self.llr <= self.spec.lower:
                self.decision = "H0"
        return self.decision

    def estimate(self) -> tuple[float, float, float] | None:
        """A's mean game score's Elo with a 95% normal interval from the pairs' spread
        (None before two pairs)."""
        n = self.pairs
        if n < 2:
            return None
        values = [x / 2 for x, c in zip(PAIR_POINTS, self.counts, strict=True) for _ in range(c)]
        mean = math.fsum(values) / n
        sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
        half = 1.959964 * sd / math.sqrt(n)
        return score_to_elo(mean), score_to_elo(mean - half), score_to_elo(mean + half)

    def doc(self, a: str, b: str, *, games: int, cap: int, interrupted: bool = False) -> dict[str, Any]:
        """The result for ``--json`` (and the text lines)."""
        s = self.spec
        est = self.estimate()
        if self.decision == "H1":
            verdict = f"H1 accepted: {a} is at least {s.elo1:g} Elo stronger than {b}"
        elif self.decision == "H0":
            verdict = f"H0 accepted: {a} is at most {s.elo0:g} Elo stronger than {b}"
        elif interrupted:
            verdict = "no decision: stopped before the test decided"
        else:
            verdict = f"no decision within the cap of {cap} games"
        return {
            "model": MODEL,
            "bots": [a, b],
            "elo0": s.elo0,
            "elo1": s.elo1,
            "alpha": s.alpha,
            "beta": s.beta,
            "llr": round(self.llr, 4),
            "lower": round(s.lower, 4),
            "upper": round(s.upper, 4),
            "pairs": self.pairs,
            "games": games,
            "cap": cap,
            "pentanomial": list(self.counts),
            "elo": None if est is None else _finite(est[0]),
            "elo_95": None if est is None else [_finite(est[1]), _finite(est[2])],
            "decision": self.decision,
            "result": verdict,
        }


def _finite(x: float) -> float | None:
    return round(x, 1) + 0.0 if math.isfinite(x) else None  # + 0.0: no "-0.0"


def format_sprt(doc: dict[str, Any]) -> list[str]:
    """The text lines of a result."""
    a, b = doc["bots"]
    elo = ""
    if doc["elo"] is not None:
        lo, hi = ("-inf" if x is None else f"{x:+.1f}" for x in doc["elo_95"])
        elo = f"; Elo {doc['elo']:+.1f} ({lo} to {hi}, 95%)"
    return [
        f"SPRT [{doc['elo0']:g}, {doc['elo1']:g}] alpha {doc['alpha']:g} beta {doc['beta']:g} ({doc['model']}): "
        f"{a} against {b}",
        f"LLR {doc['llr']:.2f} ({doc['lower']:.2f}, {doc['upper']:.2f}) after {doc['pairs']} pairs "
        f"({doc['games']} games); pentanomial {doc['pentanomial']}{elo}",
        doc["result"],
    ]


def pair_seeds(seed: Any, g: int) -> GameSeeds:
    """Game ``g``'s (deal seed, bot key) in an SPRT run: games ``2k`` and ``2k + 1`` share
    deal ``k`` (their seats swapped); every game gets its own bot key."""
    return game_seeds(seed, "sprt", (g // 2,), (g,))


class PairFeed:
    """Turns games (in play order, seats swapping each game) into pairs for a :class:`Sprt`:
    ``game`` returns True once the test has decided, which stops the series."""

    def __init__(self, test: Sprt) -> None:
        self.test = test
        self.pending: float | None = None  # A's score in the pair's first game

    def game(self, places: Sequence[int], order: Sequence[int]) -> bool:
        seat_a, seat_b = order.index(0), order.index(1)
        pa, pb = places[seat_a], places[seat_b]
        score = 1.0 if pa < pb else 0.5 if pa == pb else 0.0
        if self.pending is None:
            self.pending = score
            return False
        points, self.pending = self.pending + score, None
        return self.test.add_pair(points) is not None
