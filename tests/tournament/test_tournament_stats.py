"""The statistics behind separation: the confidence sequence covers the mean at every
sample size at once (coverage on simulated data, fixed seeds), the betting sign test keeps
its error under repeated looks and finds real differences, intervals stay in range."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable

import pytest

from arena.tournament.plan.schedule import GameKey
from arena.tournament.results.finished import GameResult, SeatResult
from arena.tournament.results.stats import (
    ConfSeq,
    MixtureTest,
    SignTest,
    block_scores,
    bootstrap_interval,
    pair_alpha,
    paired_differences,
)


def bounded(rng: random.Random, mean: float) -> float:
    """A skewed value in [-1, 1] with the given mean: a three-point law."""
    return rng.choices([-1.0, mean, 1.0], weights=[0.1 * (1 - mean), 0.8, 0.1 * (1 + mean)])[0]


def test_confidence_sequence_covers_at_every_look() -> None:
    alpha, runs, steps, misses = 0.1, 200, 300, 0
    for r in range(runs):
        rng = random.Random(r)
        cs = ConfSeq(alpha)
        for _ in range(steps):
            cs.add(bounded(rng, 0.3))
            if not cs.low <= 0.3 <= cs.high:  # a miss at any look counts
                misses += 1
                break
    assert misses / runs <= alpha


def test_confidence_sequence_is_bounded_and_shrinks() -> None:
    cs = ConfSeq(0.05, lo=0.0, hi=1.0)
    widths = []
    for x in [1.0] * 3 + [0.0, 1.0] * 100:
        cs.add(x)
        assert 0.0 <= cs.low <= cs.high <= 1.0
        widths.append(cs.high - cs.low)
    assert widths[0] == pytest.approx(1.0, abs=0.5) and widths == sorted(widths, reverse=True)
    assert cs.low < 0.5 < cs.high and widths[-1] < 0.4
    with pytest.raises(ValueError):
        cs.add(1.5)


def errors_under_looks(make: Callable[[float], SignTest | MixtureTest], alpha: float, runs: int) -> int:
    """Runs (of ``runs``, each up to 1000 values of mean exactly 0, looked at after every value)
    in which a fresh test ``make(alpha)`` decided a sign: every such decision is an error."""
    errors = 0
    for r in range(runs):
        rng = random.Random(1000 + r)
        test = make(alpha)
        for _ in range(1000):
            test.add(bounded(rng, 0.0))
            if test.decided:
                errors += 1
                break
    return errors


def test_sign_test_keeps_its_error_under_repeated_looks() -> None:
    """Mean exactly 0: deciding a sign at any of 1000 looks is an error; at most alpha of runs."""
    alpha, runs = 0.1, 200
    assert errors_under_looks(SignTest, alpha, runs) / runs <= alpha
    # ...while a naive fixed-sample z-test looked at after every value errs far more often
    naive = 0
    for r in range(100):
        rng = random.Random(5000 + r)
        total = squares = 0.0
        for n in range(1, 1001):
            x = bounded(rng, 0.0)
            total, squares = total + x, squares + x * x
            sd = max(squares / n - (total / n) ** 2, 1e-12) ** 0.5
            if n > 10 and abs(total / n) > 1.645 * sd / n**0.5:
                naive += 1
                break
    assert naive / 100 > 2 * alpha


def test_sign_test_finds_a_real_difference() -> None:
    found = []
    for r in range(20):
        rng = random.Random(r)
        test = SignTest(0.01)
        while not test.decided and test.n < 5000:
            test.add(bounded(rng, -0.2))
        found.append((test.decided, test.n))
    assert all(d == -1 for d, _ in found)
    assert statistics.median(n for _, n in found) < 600
    assert SignTest(0.05).extend([0.5] * 30).p_value < 0.05
    assert SignTest(0.05).extend([0.0] * 30).p_value == 1.0


def test_mixture_test_keeps_its_error_under_repeated_looks() -> None:
    """Mean exactly 0: deciding a sign at any of 1000 looks is an error; at most alpha of runs."""
    alpha, runs = 0.1, 100
    assert errors_under_looks(MixtureTest, alpha, runs) / runs <= alpha
    with pytest.raises(ValueError):
        MixtureTest(0.05).add(-1.5)
    with pytest.raises(ValueError):
        MixtureTest(0.05, lmax=1.0)  # a stake of 1 can lose everything on one value of -1


def test_mixture_test_finds_a_real_difference_sooner_than_online_newton_stakes() -> None:
    """Same streams: the mixture of constant stakes decides sooner on average than the online
    Newton stakes (what the adaptive tournament gains from it, measured in benchmarks/power.py)."""
    mixture, ons = [], []
    for r in range(30):
        rng = random.Random(r)
        values = [max(-1.0, min(1.0, rng.gauss(0.06, 0.28))) for _ in range(4000)]
        for test, out in ((MixtureTest(0.05 / 30), mixture), (SignTest(0.05 / 30, cap=0.75), ons)):
            for v in values:
                test.add(v)
                if test.decided:
                    break
            assert test.decided == 1
            out.append(test.n)
    assert statistics.fmean(mixture) < 0.95 * statistics.fmean(ons)
    assert MixtureTest(0.05).extend([0.5] * 30).p_value < 0.05
    assert MixtureTest(0.05).extend([0.0] * 30).p_value == 1.0


def test_bootstrap_interval_in_range_and_deterministic() -> None:
    assert bootstrap_interval([]) is None and bootstrap_interval([0.7]) is None
    assert bootstrap_interval([1.0, 1.0, 1.0]) == (1.0, 1.0)
    rng = random.Random(3)
    values = [rng.random() for _ in range(50)]
    lo, hi = bootstrap_interval(values)
    assert 0 <= lo < statistics.fmean(values) < hi <= 1
    assert bootstrap_interval(values) == (lo, hi)  # seeded by the data
    big = [rng.random() for _ in range(1000)]
    lo, hi = bootstrap_interval(big)  # the normal interval beyond BOOTSTRAP_MAX
    assert hi - lo == pytest.approx(2 * 1.96 * statistics.stdev(big) / 1000**0.5, rel=1e-3)


def test_bootstrap_coverage_on_simulated_blocks() -> None:
    hits = 0
    for r in range(200):
        rng = random.Random(r)
        values = [rng.betavariate(2, 5) for _ in range(60)]  # mean 2/7
        lo, hi = bootstrap_interval(values, resamples=400)
        hits += lo <= 2 / 7 <= hi
    assert hits / 200 >= 0.90


def test_paired_differences_within_shared_blocks() -> None:
    def g(table: int, deal: int, rot: int, seats: tuple[tuple[int, int], ...]) -> GameResult:
        return GameResult(GameKey(3, table, deal, rot), tuple(SeatResult(b, p, 0, False, 0, False) for b, p in seats))

    games = [
        g(0, 0, 0, ((0, 1), (1, 2), (2, 3))),
        g(0, 0, 1, ((1, 1), (2, 2), (0, 3))),
        g(1, 0, 0, ((0, 1), (1, 2), (3, 3))),
    ]
    blocks = block_scores(games)
    assert blocks[(3, 0, 0)] == {0: 0.5, 1: 0.75, 2: 0.25}
    diffs = paired_differences(blocks)
    assert diffs[(0, 1)] == [-0.25, 0.5] and diffs[(1, 2)] == [0.5] and (2, 3) not in diffs
    assert pair_alpha(0.95, 10) == pytest.approx(0.005)
