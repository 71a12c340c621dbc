"""``arena play A B --sprt ELO0,ELO1``: the pentanomial GSPRT (checked against an independent
constrained maximum-likelihood fit), pairs of games on one deal with seats swapped, the
decisions for a strong and an equal pair, determinism for a seed, one-line errors for bad
arguments, and Ctrl-C with the result so far."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import run

from arena.playing.sprt import PairFeed, Sprt, SprtSpec, elo_to_score, gsprt_llr, pair_seeds, score_to_elo


def games_in(path: Path) -> int:
    """Games whose record is written (a game's first line opens its record)."""
    try:
        return sum(1 for line in path.read_text().splitlines() if line.startswith('{"event":"game"'))
    except OSError:
        return 0


# -- the test itself ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "counts, elo0, elo1, expected",
    [  # LLRs from scipy's SLSQP maximising the likelihood under the mean-score constraint
        ([0, 0, 2, 0, 37], 0, 20, 2.180485205915384),
        ([10, 50, 200, 60, 12], 0, 10, 0.4291164178848616),
        ([10, 50, 200, 60, 12], -5, 5, 1.3444864439589643),
    ],
)
def test_llr_is_the_profile_likelihood_ratio(counts: list[int], elo0: float, elo1: float, expected: float) -> None:
    assert gsprt_llr(counts, elo0, elo1) == pytest.approx(expected, abs=1e-9)


def test_llr_properties() -> None:
    counts = [3, 10, 40, 20, 7]
    # the same results seen from the other bot: reversed counts, hypotheses negated
    assert gsprt_llr(counts[::-1], -0.0, -10.0) == pytest.approx(gsprt_llr(counts, 0, 10))
    assert gsprt_llr([0] * 5, 0, 10) == 0.0
    # more pairs won by A: more evidence for H1
    assert gsprt_llr([1, 1, 10, 1, 1], 0, 10) < gsprt_llr([1, 1, 10, 1, 5], 0, 10)
    assert elo_to_score(0) == 0.5 and score_to_elo(elo_to_score(123.0)) == pytest.approx(123.0)
    assert score_to_elo(1.0) == math.inf and score_to_elo(0.0) == -math.inf


def test_bounds_and_decisions_stay() -> None:
    spec = SprtSpec(0, 10)
    assert spec.lower == pytest.approx(math.log(0.05 / 0.95)) and spec.upper == pytest.approx(math.log(0.95 / 0.05))
    test = Sprt(spec)
    for _ in range(200):
        if test.add_pair(2.0):
            break
    assert test.decision == "H1" and test.llr >= spec.upper
    test.add_pair(0.0)  # once decided, it stays
    assert test.decision == "H1"
    with pytest.raises(ValueError, match="ELO0 below ELO1"):
        SprtSpec(5, 5)


def test_pairs_share_a_deal_with_seats_swapped() -> None:
    assert pair_seeds(7, 0)[0] == pair_seeds(7, 1)[0] != pair_seeds(7, 2)[0]
    assert len({pair_seeds(7, g)[1] for g in range(4)}) == 4  # every game its own bot key
    test = Sprt(SprtSpec(0, 10))
    feed = PairFeed(test)
    # game 1: A at seat 0 wins; game 2 (seats swapped, A at seat 1): both placed 1, a draw
    assert feed.game([1, 2], [0, 1]) is False and test.pairs == 0
    feed.game([1, 1], [1, 0])
    # game 3: A at seat 0 placed 2; game 4: A at seat 1 placed 1
    feed.game([2, 1], [0, 1])
    feed.game([2, 1], [1, 0])
    assert test.counts == [0, 0, 1, 1, 0]  # a pair of 1.5 points, a pair of 1


# -- arena play --sprt -------------------------------------------------------------------------


def sprt_doc(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code, out, err = run(capsys, "play", *argv, "-q", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert isinstance(doc["sprt"], dict)
    return doc


def test_strong_against_weak_accepts_h1_deterministically(capsys: pytest.CaptureFixture[str]) -> None:
    doc = sprt_doc(capsys, "greedy", "random", "--sprt", "0,50", "--seed", "1")
    sprt = doc["sprt"]
    assert isinstance(sprt, dict)
    assert sprt["decision"] == "H1" and sprt["llr"] >= sprt["upper"] == pytest.approx(2.9444, abs=1e-4)
    assert doc["games"] == sprt["games"] == 2 * sprt["pairs"] < 200  # stopped early, on a whole pair
    assert sum(sprt["pentanomial"]) == sprt["pairs"]
    assert sprt["result"] == "H1 accepted: greedy is at least 50 Elo stronger than random"
    assert sprt_doc(capsys, "greedy", "random", "--sprt", "0,50", "--seed", "1") == doc  # same seed, same test


def test_a_bot_against_itself_does_not_claim_h1(capsys: pytest.CaptureFixture[str]) -> None:
    doc = sprt_doc(capsys, "random", "random", "--sprt", "0,50", "--seed", "2")
    sprt = doc["sprt"]
    assert isinstance(sprt, dict)
    assert sprt["decision"] == "H0" and sprt["llr"] <= sprt["lower"]
    assert sprt["result"] == "H0 accepted: random is at most 0 Elo stronger than random#2"


def test_text_output_and_the_cap(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "play", "random", "random", "--sprt", "0,5", "--games", "10", "--seed", "3", "-q")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[-3].startswith("SPRT [0, 5] alpha 0.05 beta 0.05 (pentanomial GSPRT, logistic Elo)")
    assert lines[-2].startswith("LLR ") and "(-2.94, 2.94) after 5 pairs (10 games)" in lines[-2]
    assert lines[-1] == "no decision within the cap of 10 games"
    code, out, err = run(capsys, "play", "greedy", "random", "--sprt", "0,50", "--seed", "1", "-q", "--format", "csv")
    assert code == 0 and out.splitlines()[0].startswith("bot,") and len(out.splitlines()) == 3
    assert "H1 accepted" in err  # the verdict on stderr keeps stdout one CSV table


@pytest.mark.parametrize(
    "argv, message",
    [
        (["greedy", "random", "random", "--sprt", "0,5"], "--sprt compares exactly 2 bots; 3 given"),
        (["greedy", "random", "--sprt", "5"], "--sprt takes ELO0,ELO1 like 0,10, not '5'"),
        (["greedy", "random", "--sprt", "0,x"], "--sprt takes ELO0,ELO1"),
        (["greedy", "random", "--sprt", "nan,5"], "two finite numbers"),
        (["greedy", "random", "--sprt", "5,0"], "needs ELO0 below ELO1; 5,0 given"),
        (["greedy", "random", "--sprt", "0,5", "--alpha", "0.7"], "--alpha is an error rate above 0 and below 0.5"),
        (["greedy", "random", "--sprt", "0,5", "--beta", "0"], "--beta is an error rate"),
        (["greedy", "random", "--sprt", "0,5", "--alpha", "x"], "an error rate is a number"),
        (["greedy", "random", "--alpha", "0.1"], "--alpha goes with --sprt"),
        (["greedy", "random", "--sprt", "0,5", "--games", "3"], "an even number, not 3"),
        (["human", "random", "--sprt", "0,5"], "takes no human seat"),
        (["greedy", "random", "--sprt", "0,5", "--format", "yaml"], "unknown format 'yaml'"),
    ],
)
def test_bad_arguments_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "play", *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert out == ""


def test_ctrl_c_stops_with_the_result_so_far(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    # bounds this narrow and error rates this small take many thousands of pairs to decide
    argv = ["play", "random", "random", "--sprt=-0.5,0.5", "--alpha", "0.001", "--beta", "0.001"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", *argv, "--seed", "4", "-q", "--json", "--replay", str(record)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 60
    while games_in(record) < 6:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    doc = json.loads(out)
    n = doc["games"]
    sprt = doc["sprt"]
    assert doc["interrupted"] is True and n >= 6 and sprt["games"] == n and sprt["pairs"] == n // 2
    assert sprt["decision"] is None and sprt["result"] == "no decision: stopped before the test decided"
    assert err.startswith(f"arena: interrupted after {n} of 20000 games")
