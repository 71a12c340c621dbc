"""benchmarks/strength.py's ``--jobs``: deals split across processes give the serial run's results."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))

import strength  # noqa: E402


def run(capsys: pytest.CaptureFixture[str], jobs: int) -> tuple[str, str]:
    strength.search_strength(3, 3, seed=7, playouts=2, each=True, jobs=jobs)
    out, err = capsys.readouterr()
    return re.sub(r"CPU per move.*", "", out), err  # CPU times differ run to run; nothing else may


def test_jobs_split_deals_with_the_serial_results(capsys: pytest.CaptureFixture[str]) -> None:
    serial, games = run(capsys, 1)
    assert games.count("game 3 ") == 9 and "3 deals x 3 seats = 9 games" in serial
    assert run(capsys, 2) == (serial, games)  # the same games, taken in deal order
