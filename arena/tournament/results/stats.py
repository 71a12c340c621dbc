"""Paired statistics on duplicate blocks: paired differences, bounded intervals, and an
always-valid confidence sequence for sequential decisions.

A *duplicate block* is one deal played once per seat rotation at one table
(``(size, table, deal)``). Two bots at the same table in a block got the same
cards and the same opponents, so the difference of their block scores has the
deal's luck removed; blocks of different deals are independent. Everything
here works on those per-block values, never on single games.

* :func:`bootstrap_interval`: a fixed-sample 95% interval for a mean over
  blocks (percentile bootstrap over blocks, deterministic for the data), which
  stays inside the range of the values. For one look at finished results.
* :class:`ConfSeq`: the *predictable plug-in empirical-Bernstein* confidence
  sequence of Waudby-Smith & Ramdas ("Estimating means of bounded random
  variables by betting", JRSS B 2024, Theorem 2 with the ``t log(1 + t)``
  rate), for values in a known range. It holds at every sample size at once
  (``P(some interval misses the mean) <= alpha``, by Ville's inequality on a
  nonnegative supermartingale), so it may be looked at after every round and
  the sampling may stop whenever it likes: the adaptive tournament decides on
  it. Its running intersection is reported, so an interval only ever shrinks.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import struct
from collections.abc import Iterable, Sequence
from typing import Self

from .finished import GameResult

Block = tuple[int, int, int]  # (size, table, deal)


def block_scores(games: Iterable[GameResult]) -> dict[Block, dict[int, float]]:
    """Per block, each bot's mean normalised placement ``(K - place) / (K - 1)`` over the
    block's games (1 first, 0 last), blocks in key order."""
    sums: dict[Block, dict[int, list[float]]] = {}
    for g in sorted(games, key=lambda g: g.key):
        k = len(g.seats)
        per = sums.setdefault((g.key.size, g.key.table, g.key.deal), {})
        for bot, place, *_ in g.seats:
            per.setdefault(bot, []).append((k - place) / (k - 1))
    return {b: {bot: math.fsum(v) / len(v) for bot, v in per.items()} for b, per in sums.items()}


def paired_differences(blocks: dict[Block, dict[int, float]]) -> dict[tuple[int, int], list[float]]:
    """For every pair ``a < b`` of bots that shared a block: ``score_a - score_b`` per shared
    block (in [-1, 1]), in block order."""
    out: dict[tuple[int, int], list[float]] = {}
    for block in sorted(blocks):
        per = blocks[block]
        for a, b in itertools.combinations(sorted(per), 2):
            out.setdefault((a, b), []).append(per[a] - per[b])
    return out


def _seed_of(values: Sequence[float]) -> int:
    """A seed that is a function of the data alone, so the same results give the same interval."""
    h = hashlib.sha256(struct.pack(f"<{len(values)}d", *values))
    return int.from_bytes(h.digest()[:8], "little")


#: Beyond this many blocks the bootstrap's percentiles match the normal interval to the digits
#: shown; the normal interval is used there (a bootstrap of 10^4 blocks costs seconds).
BOOTSTRAP_MAX = 200


def bootstrap_interval(
    values: Sequence[float], confidence: float = 0.95, *, lo: float = 0.0, hi: float = 1.0, resamples: int = 1000
) -> tuple[float, float] | None:
    """Percentile bootstrap interval for the mean of ``values`` (independent blocks), within
    ``[lo, hi]``; None below two values. Deterministic: the resampling seed is a hash of the
    values. Above :data:`BOOTSTRAP_MAX` values the normal interval (clipped to the range) is used.
    """
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    tail = (1 - confidence) / 2
    if n > BOOTSTRAP_MAX:
        sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
        half = _z(1 - tail) * sd / math.sqrt(n)
        return max(lo, mean - half), min(hi, mean + half)
    rng = random.Random(_seed_of(values))
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(resamples))
    low = means[int(math.floor(tail * (resamples - 1)))]
    high = means[int(math.ceil((1 - tail) * (resamples - 1)))]
    return max(lo, low), min(hi, high)


def _z(p: float) -> float:
    """The standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


class ConfSeq:
    """Always-valid confidence sequence for the mean of values in ``[lo, hi]`` (PrPl-EB).

    With ``x`` mapped to ``[0, 1]``: ``lambda_t = min(sqrt(2 log(2/alpha) / (s2_{t-1} t log(1+t))), c)``
    (``s2`` a running variance with a prior of 1/4 at weight one), and the interval
    ``sum(lambda x) / sum(lambda) +- (log(2/alpha) + sum(v psi(lambda))) / sum(lambda)`` with
    ``v_t = 4 (x_t - m_{t-1})^2`` and ``psi(l) = (-log(1 - l) - l) / 4``. Each ``lambda_t``
    uses only earlier values (predictable), which is what keeps the guarantee under
    optional stopping and adaptively chosen samples. When the values' conditional means
    differ (different tables), the sequence covers their ``lambda``-weighted average; if
    every one of them is above 0, so is that average.
    """

    def __init__(self, alpha: float, lo: float = -1.0, hi: float = 1.0, c: float = 0.5) -> None:
        if not 0 < alpha < 1:
            raise ValueError("alpha must be in (0, 1)")
        self.alpha, self.lo, self.hi, self.c = alpha, lo, hi, c
        self.log_term = math.log(2 / alpha)
        self.n = 0
        self._sum_x = 0.0  # of mapped values, for the running mean
        self._sum_sq = 0.0  # sum (x_i - m_i)^2, for the running variance
        self._sum_l = 0.0  # sum lambda
        self._sum_lx = 0.0  # sum lambda x
        self._sum_vpsi = 0.0  # sum v psi(lambda)
        self.low, self.high = lo, hi  # running intersection, original scale

    def add(self, value: float) -> None:
        """One more value (must lie in ``[lo, hi]``)."""
        if not self.lo - 1e-9 <= value <= self.hi + 1e-9:
            raise ValueError(f"{value} is outside [{self.lo}, {self.hi}]")
        x = min(1.0, max(0.0, (value - self.lo) / (self.hi - self.lo)))
        t = self.n + 1
        mean_prev = (0.5 + self._sum_x) / t  # m_{t-1}
        var_prev = (0.25 + self._sum_sq) / t  # s2_{t-1}
        lam = min(math.sqrt(2 * self.log_term / (var_prev * t * math.log(1 + t))), self.c)
        self._sum_l += lam
        self._sum_lx += lam * x
        self._sum_vpsi += 4 * (x - mean_prev) ** 2 * (-math.log(1 - lam) - lam) / 4
        self.n = t
        self._sum_x += x
        self._sum_sq += (x - (0.5 + self._sum_x) / (t + 1)) ** 2
        centre = self._sum_lx / self._sum_l
        half = (self.log_term + self._sum_vpsi) / self._sum_l
        scale = self.hi - self.lo
        low, high = self.lo + scale * max(0.0, centre - half), self.lo + scale * min(1.0, centre + half)
        if max(self.low, low) <= min(self.high, high):  # empty only on a miss (probability <= alpha)
            self.low, self.high = max(self.low, low), min(self.high, high)
        else:
            self.low, self.high = low, high

    def extend(self, values: Iterable[float]) -> ConfSeq:
        for v in values:
            self.add(v)
        return self

    @property
    def interval(self) -> tuple[float, float]:
        return self.low, self.high

    def sign(self) -> int:
        """+1 when the whole interval is above 0, -1 when below, 0 while it holds 0."""
        return 1 if self.low > 0 else -1 if self.high < 0 else 0


def pair_alpha(confidence: float, pairs: int) -> float:
    """Bonferroni: the error each of ``pairs`` comparisons may have so that all of them hold
    together with probability ``confidence``."""
    return (1 - confidence) / max(1, pairs)


class BettingTest:
    """What the betting tests share: values in ``[-1, 1]`` fed one at a time, two wealths
    (betting on a mean above 0, and below), the sign *decided* once one side's running
    maximum reaches ``2 / alpha`` (and kept), an anytime-valid p-value, the values'
    variance. A subclass says how a value moves each side's log-wealth (:meth:`_bet`)."""

    def __init__(self, alpha: float) -> None:
        if not 0 < alpha < 1:
            raise ValueError("alpha must be in (0, 1)")
        self.alpha = alpha
        self.threshold = math.log(2 / alpha)
        self.n = 0
        self.log_wealth = [0.0, 0.0]  # betting on > 0, on < 0
        self.best = [0.0, 0.0]  # running maxima of the log wealth
        self.decided = 0
        self._mean = 0.0
        self._m2 = 0.0

    @property
    def var(self) -> float:
        """The values' sample variance so far (0 below two)."""
        return self._m2 / (self.n - 1) if self.n > 1 else 0.0

    def _bet(self, side: int, sx: float) -> float:
        """Side ``side``'s log-wealth after a value of ``sx`` (the value, sign-flipped for side 1)."""
        raise NotImplementedError

    def add(self, value: float) -> None:
        if not -1 - 1e-9 <= value <= 1 + 1e-9:
            raise ValueError(f"{value} is outside [-1, 1]")
        x = min(1.0, max(-1.0, value))
        self.n += 1
        delta = x - self._mean
        self._mean += delta / self.n
        self._m2 += delta * (x - self._mean)
        for side, sx in enumerate((x, -x)):
            self.log_wealth[side] = self._bet(side, sx)
            self.best[side] = max(self.best[side], self.log_wealth[side])
        if not self.decided:
            if self.best[0] >= self.threshold:
                self.decided = 1
            elif self.best[1] >= self.threshold:
                self.decided = -1

    def extend(self, values: Iterable[float]) -> Self:
        for v in values:
            self.add(v)
        return self

    @property
    def p_value(self) -> float:
        """Anytime-valid two-sided p-value: ``min(1, 2 / max wealth)``."""
        return min(1.0, 2 * math.exp(-max(self.best)))


class SignTest(BettingTest):
    """Anytime-valid test of the sign of a mean of values in ``[-1, 1]``, by betting.

    Two gamblers start with wealth 1: one bets that the mean is above 0 (wealth
    ``prod(1 + l_i x_i)``), one that it is below (``prod(1 - l_i x_i)``), each stake
    ``l_i`` in ``[0, 1/2]`` chosen from earlier values only by online Newton steps
    (Cutkosky & Orabona 2018; as in Shekhar & Ramdas 2023's sequential two-sample
    tests). While every value's conditional mean is at most 0, the first wealth is a
    nonnegative supermartingale, so by Ville's inequality it ever reaches ``2 / alpha``
    with probability at most ``alpha / 2`` - however often it is looked at and whenever
    sampling stops; the same for the other side. The mean's sign is *decided* when one
    of them does, and stays decided. The likelihood ratio of Wald's SPRT is such a
    wealth; betting needs no alternative to be named and its wealth grows at nearly the
    best rate the data allow.
    """

    #: The online Newton step's constant (Cutkosky & Orabona 2018).
    STEP = 2 / (2 - math.log(3))

    def __init__(self, alpha: float, cap: float = 0.5) -> None:
        super().__init__(alpha)
        self.cap = cap
        self._stake = [0.0, 0.0]
        self._grad_sq = [1.0, 1.0]

    def _bet(self, side: int, sx: float) -> float:
        stake = self._stake[side]
        wealth = self.log_wealth[side] + math.log1p(stake * sx)
        grad = sx / (1 + stake * sx)  # d/dl of log(1 + l x)
        self._grad_sq[side] += grad * grad
        self._stake[side] = min(self.cap, max(0.0, stake + self.STEP * grad / self._grad_sq[side]))
        return wealth


class MixtureTest(BettingTest):
    """Anytime-valid test of the sign of a mean of values in ``[-1, 1]``, by a *mixture* of
    constant bets (Waudby-Smith & Ramdas 2024, section 4's "hedged" and mixture capital
    processes; Robbins' method of mixtures).

    For each stake ``l`` of a fixed grid of ``K`` stakes in ``(0, lmax]``, spread evenly (a
    discrete uniform prior), a gambler bets ``l`` on the mean being above 0 (wealth
    ``prod(1 + l x_i)``) and another on it being below (``prod(1 - l x_i)``). Each such
    wealth is a nonnegative supermartingale while its side's null holds (every value's
    conditional mean at most 0, resp. at least 0), and so is the prior's average of them:
    the wealth of one side. By Ville's inequality a side's wealth *ever* reaches
    ``2 / alpha`` with probability at most ``alpha / 2`` - at any number of looks, for any
    stopping rule and any way the next samples were chosen from the past. The sign is
    decided when one side gets there, and stays decided.

    Why a mixture, not one tuned stake: the best constant stake ``l* ~ mean / E[x^2]``
    grows the log-wealth at about ``mean^2 / (2 E[x^2])`` per value; the average over a
    fine grid loses only about ``log(sqrt(n E[x^2]))`` of that (the stakes near ``l*`` all
    win), where a stake learned online (:class:`SignTest`'s online Newton steps) pays more
    while it learns. The difference is measured in ``benchmarks/power.py``. The stakes
    are fixed before any data, so the guarantee needs no predictability argument at all.
    """

    def __init__(self, alpha: float, grid: int = 20, lmax: float = 0.95) -> None:
        super().__init__(alpha)
        if not 0 < lmax < 1:
            raise ValueError("the largest stake must be in (0, 1)")
        self.stakes = [lmax * (k + 1) / grid for k in range(grid)]
        # per side, per stake: wealth / exp(offset[side]) (rescaled now and then, never rounded to 0 or inf)
        self._w = [[1.0] * grid, [1.0] * grid]
        self._offset = [0.0, 0.0]
        self._grid = grid

    def _bet(self, side: int, sx: float) -> float:
        w = [wk * (1.0 + stake * sx) for wk, stake in zip(self._w[side], self.stakes, strict=True)]
        top = max(w)
        if not 1e-100 < top < 1e100:  # keep the numbers in range: move the scale into the offset
            self._offset[side] += math.log(top)
            w = [wk / top for wk in w]
        self._w[side] = w
        return self._offset[side] + math.log(sum(w) / self._grid)
