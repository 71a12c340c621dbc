"""benchmarks/power.py's own machinery: merged pools and the clairvoyant bound's exact LP.

The benchmark's numbers are only as good as its world model and its bound; these check both
on small inputs whose answers are known."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))

import power  # noqa: E402


def test_merged_pools_hold_every_seeds_deals_at_the_same_tables(tmp_path: Path) -> None:
    ladder = tmp_path / "ladder"
    one = power.build_pool(ladder, tmp_path / "a.sqlite", 1, 21)
    two = power.build_pool(ladder, tmp_path / "b.sqlite", 1, 22)
    merged = power.merged_pool(ladder, tmp_path, 1, [21, 22])  # keeps pool21/pool22.sqlite there
    assert sorted(merged) == list(range(15)) and all(len(deals) == 2 for deals in merged.values())
    for t, table in enumerate(power.tables_of(6)):
        bots = [{bot for g in deal["block"] for bot, *_ in g.seats} for deal in merged[t]]
        assert bots == [set(table), set(table)]  # the same bots at the same table number in both pools
        seeds = [tuple(g.key for g in deal["block"]) for deal in merged[t]]
        assert seeds[0] == tuple(g.key for g in one[t][0]["block"]) == seeds[1]  # same keys, other seeds
        assert merged[t][0]["block"] == one[t][0]["block"] and merged[t][1]["block"] == two[t][0]["block"]
    assert (tmp_path / "pool21.sqlite").exists() and (tmp_path / "pool22.sqlite").exists()


def test_the_bound_is_the_linear_programme_optimum() -> None:
    """The LP ``min sum x_t`` s.t. ``sum_t row[t][p] x_t >= need_p`` equals, by duality, the largest
    ``need . y`` over the vertices of ``{y >= 0 : row . y <= 1}``."""
    rows = [(1, 1, 0), (0, 1, 1), (1, 0, 1)]  # three tables, each holding two of three pairs
    vertices = power._vertices(rows)
    assert (Fraction(1, 2), Fraction(1, 2), Fraction(1, 2)) in vertices
    best = max(sum(y * n for y, n in zip(v, (10, 10, 10), strict=True)) for v in vertices)
    assert best == 15  # each table serves two of the pairs: 30 pair-blocks need 15 blocks
    best = max(sum(y * n for y, n in zip(v, (10, 0, 0), strict=True)) for v in vertices)
    assert best == 10  # one pair alone: every block at a table holding it
    tables = power.tables_of(6)
    rows6 = [tuple(int(p in t and p + 1 in t) for p in range(5)) for t in tables]
    v6 = power._vertices(rows6)
    # the ladder: five equal needs cost 2 blocks per need (no table holds both end pairs and the middle)
    assert max(sum(y * 1 for y in v) for v in v6) == 2


@pytest.mark.parametrize("bad", ["1,x", ",", "seven"])
def test_bad_pools_argument_is_one_line(
    bad: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["power.py", "--pools", bad])
    with pytest.raises(SystemExit) as exc:
        power.main()
    assert exc.value.code == 2 and "--pools wants comma-separated seeds" in capsys.readouterr().err
