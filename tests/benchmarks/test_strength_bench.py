"""benchmarks/strength.py's ``--jobs``: deals split across processes give the serial run's results."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))

import strength  # noqa: E402


def run(capsys: pytest.CaptureFixture[str], jobs: int) -> tuple[str, str]:
    strength.search_strength(3, 3, seed=7, playouts=2, each=True, jobs=jobs)
    out, err = capsys.readouterr()
    return re.sub(r"CPU per move.*", "", out), err  # CPU times differ run to run; nothing else may


def test_jobs_split_deals_with_the_serial_results(capsys: pytest.CaptureFixture[str]) -> None:
    serial, games = run(capsys, 1)
    assert games.count("game 3 ") == 9 and "3 deals x 3 seats = 9 games" in serial
    assert run(capsys, 2) == (serial, games)  # the same games, taken in deal order


def test_regret_scores_every_variant_on_the_same_decisions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import regret

    last = tmp_path / "last.py"  # a variant that always takes the last candidate
    last.write_text(
        "class Bot:\n"
        "    def __init__(self, playouts=1):\n"
        "        self.stop = 0\n"
        "    def move(self, turn):\n"
        "        turn.finish()\n"
        "    def choose(self, turn, random, candidates):\n"
        "        return candidates[-1]\n"
    )
    variants = [f"a={regret.SEARCH}:12", f"b={regret.SEARCH}:12", f"last={last}"]
    assert regret.main(["--games", "1", "--oracle", "4", "--seed", "3", *variants]) == 0
    out = capsys.readouterr().out
    rows = {m[0]: (float(m[1]), m[2]) for m in re.findall(r"(\w+): regret (\d\.\d+), against a ([+-]\d\.\d+)", out)}
    assert set(rows) == {"a", "b", "last", "heuristic"}, out
    assert rows["b"] == rows["a"] == (rows["a"][0], "+0.0000"), out  # the same bot, the same seeds: the same choices
    assert rows["last"][1] != "+0.0000" and all(r >= 0 for r, _ in rows.values()), out
    assert int(re.search(r"(\d+) decisions", out)[1]) >= 10  # type: ignore[index]


def test_regret_refuses_a_bad_variant_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    import regret

    assert regret.main(["nonsense"]) == 2
    assert regret.main(["x=/no/such/bot.py"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and all(line.startswith("regret: ") for line in err.splitlines()), err


def test_a_run_goes_on_from_a_later_deal_with_the_same_games(capsys: pytest.CaptureFixture[str]) -> None:
    strength.search_strength(2, 3, seed=7, playouts=2, each=True)
    whole = capsys.readouterr().err
    strength.search_strength(2, 2, seed=7, playouts=2, each=True, first=1)
    later = capsys.readouterr().err
    lines = [line for line in whole.splitlines() if line.startswith("game 2 ")]
    assert [line for line in later.splitlines() if line.startswith("game 2 ")] == lines[2:] and len(lines) == 6
