"""Adaptive tournaments (``--until-separated``), gauntlets and ``standings --format``:
deterministic for a seed, the same after kill -9 and resume, the same on Ray; gauntlet
tables all hold the new bot; every output format carries the same standings."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_tournament import count_games, group_gone, run_cli, standings, standings_apart, wait_for_games

from arena.cli import main
from arena.tournament.db.read import open_readonly
from arena.tournament.plan.adaptive import LEGACY_METHOD, AdaptivePlanner, Design, State
from arena.tournament.plan.schedule import GameKey, gauntlet_schedule

# Two pairs of identical bots (inseparable) and a weak one, at 3-player tables (10 tables).
BOTS = ["greedy", "random", "greedy", "random", "random"]
ARGS = ["--players", "3", "--seed", "5", "--until-separated", "--budget", "300", "--quiet"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("adaptive") / "ref.sqlite"
    assert main(["tournament", *BOTS, *ARGS, "--workers", "1", "--db", str(db)]) == 0
    return standings_apart(db)


def test_budget_spent_and_inseparable_pairs_named(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert reference["games"] <= 300 and reference["games"] > 30  # more than the first round
    sep = reference["separation"]
    assert sep["status"] == "budget" and not sep["settled"]
    verdicts = {(p["upper"], p["lower"]): p["verdict"] for p in sep["pairs"]}
    assert len(verdicts) == 4  # every adjacent pair of five bots
    # the copies of one bot are never claimed apart
    for (up, low), verdict in verdicts.items():
        if up.split("#")[0] == low.split("#")[0]:
            assert verdict == "not separated"
    # rows of the standings: same order as the JSON's, scores inside [0, 1]
    for row in reference["overall"]["standings"]:
        assert 0 <= row["score_lo"] <= row["score"] <= row["score_hi"] <= 1
    code, _, err = run_cli(
        capsys, "tournament", *BOTS, *ARGS[:-1], "--workers", "1", "--db", str(tmp_path / "again.sqlite")
    )
    assert code == 0
    assert "budget of 300 games spent" in err and "still inseparable:" in err and "greedy-greedy#2" in err


def test_two_workers_same_adaptive_results(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "w2.sqlite"
    code, out, err = run_cli(capsys, "tournament", *BOTS, *ARGS, "--workers", "2", "--db", str(db), "--json")
    assert code == 0, err
    doc = json.loads(out)
    doc.pop("db")
    assert doc == reference


def test_kill_9_then_resume_gives_identical_results(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "killed.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", *BOTS, *ARGS, "--workers", "2", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    wait_for_games(proc, db, 80)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert group_gone(proc.pid)
    stored = count_games(db)
    assert 80 <= stored < reference["games"]
    code, _, err = run_cli(capsys, "tournament", *BOTS, *ARGS[:-1], "--workers", "1", "--db", str(db))
    assert code == 0, err
    assert f"resuming: {stored} games already in" in err
    assert standings(capsys, db) == reference


@pytest.mark.long
def test_ray_backend_same_adaptive_results(
    reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], ray_session: None
) -> None:
    db = tmp_path / "ray.sqlite"
    code, out, err = run_cli(
        capsys, "tournament", *BOTS, *ARGS, "--workers", "2", "--backend", "ray", "--db", str(db), "--json"
    )
    assert code == 0, err
    doc = json.loads(out)
    doc.pop("db")
    assert doc == reference


def test_separates_bots_of_known_order_and_stops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys,
        "tournament",
        "greedy",
        "random",
        "--until-separated",
        "--seed",
        "1",
        "-q",
        "--workers",
        "1",
        "--db",
        str(tmp_path / "two.sqlite"),
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["separation"]["status"] == "separated" and doc["separation"]["settled"]
    assert [r["bot"] for r in doc["overall"]["standings"]] == ["greedy", "random"]
    assert doc["games"] < 200  # far apart: a few rounds of 4 deals x 2 seatings


def test_until_separated_at_several_table_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Every table of every size in the first round, then blocks where the order is unsettled;
    # each game numbered once (one size's numbering would give 2p-t0-d1-r0 and 3p-t0-d0-r2 one
    # id), the same games after a resume, and the separation replayed from the database.
    db = tmp_path / "sizes.sqlite"
    argv = ["tournament", "heuristic", "random", "random", "-k", "2-3", "--until-separated", "--seed", "4"]
    code, out, err = run_cli(capsys, *argv, "--budget", "60", "-q", "--workers", "1", "--db", str(db), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc["by_size"]) == {"2", "3"} and doc["separation"]["status"] in ("separated", "budget")
    assert 9 < doc["games"] <= 60  # more than the first round (3 tables of 2 and one of 3), within the budget
    conn, _ = open_readonly(db)
    try:
        rows = conn.execute("SELECT id, size, tbl, deal, rotation FROM games").fetchall()
    finally:
        conn.close()
    assert len({r[0] for r in rows}) == len(rows) == doc["games"] and {r[1] for r in rows} == {2, 3}
    assert {(r[2], r[3]) for r in rows if r[1] == 2} >= {(0, 0), (1, 0), (2, 0)} and (0, 0) in {
        (r[2], r[3]) for r in rows if r[1] == 3
    }
    code, again, err = run_cli(capsys, *argv, "--budget", "60", "-q", "--workers", "1", "--db", str(db), "--json")
    assert code == 0 and json.loads(again)["games"] == doc["games"], err  # nothing left to play
    design = Design(3, 3, ((0, 1), (0, 2), (1, 2), (0, 1, 2)))
    assert design.several and design.where == ((2, 0), (2, 1), (2, 2), (3, 0)) and design.first_round_games == 9
    assert State(design).keys((3, 5))[-1] == GameKey(3, 0, 5, 2)


def test_decisions_are_a_function_of_the_results_alone() -> None:
    """Replaying the same games in any arrival order plans the same rounds."""
    design = Design(5, 3, tuple(__import__("itertools").combinations(range(5), 3)))
    state = State(design)
    assert state.rounds[0] == [(t, 0) for t in range(10)]
    assert design.family == 10 and design.alpha == pytest.approx(0.005)
    replay = AdaptivePlanner(design, budget=30)
    keys = replay.advance()
    assert len(keys) == 30 and replay.advance() == keys  # nothing new: the same plan
    gauntlet = Design(5, 3, gauntlet_schedule(4, 3, 100, 0), gauntlet=True)
    assert gauntlet.family == 4
    assert State(gauntlet).comparisons() == [(0, 1), (0, 2), (0, 3), (0, 4)]


def test_gauntlet_tables_all_hold_the_new_bot() -> None:
    tables = gauntlet_schedule(5, 4, 100, 0)
    assert len(tables) == 10 and all(t[0] == 0 for t in tables)
    assert sorted(tuple(t[1:]) for t in tables) == sorted(__import__("itertools").combinations(range(1, 6), 3))
    assert gauntlet_schedule(3, 2, 100, 0) == ((0, 1), (0, 2), (0, 3))
    balanced = gauntlet_schedule(12, 4, 60, 0)  # C(12, 3) = 220 > 60: a balanced choice
    assert 0 < len(balanced) <= 60 and all(0 in t for t in balanced)
    with pytest.raises(ValueError):
        gauntlet_schedule(2, 4, 100, 0)


def test_gauntlet_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "g.sqlite"
    code, out, err = run_cli(
        capsys,
        "tournament",
        "greedy",
        "--gauntlet",
        "random",
        "random",
        "greedy",
        "--players",
        "3",
        "--games",
        "2",
        "--seed",
        "4",
        "--db",
        str(db),
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["settings"]["schedule"] == {"3": "gauntlet"}
    assert doc["games"] == 3 * 2 * 3
    assert all(r["games"] == 18 for r in doc["overall"]["standings"] if r["bot"] == "greedy")
    assert [(p["upper"], p["lower"]) for p in doc["separation"]["pairs"]] == [
        ("greedy", "random"),
        ("greedy", "random#2"),
        ("greedy", "greedy#2"),
    ]
    code, _, err = run_cli(
        capsys,
        "tournament",
        "greedy",
        "--gauntlet",
        "random",
        "random",
        "--until-separated",
        "--players",
        "2",
        "--seed",
        "4",
        "-q",
        "--workers",
        "1",
        "--db",
        str(tmp_path / "s.sqlite"),
    )
    assert code == 0, err
    code, out, _ = run_cli(capsys, "standings", "--db", str(tmp_path / "s.sqlite"), "--json")
    sep = json.loads(out)["separation"]
    assert [(p["upper"], p["lower"]) for p in sep["pairs"]] == [("greedy", "random"), ("greedy", "random#2")]
    assert sep["compares"] == "the new bot against each of the field"
    assert sep["settled"] and {p["verdict"] for p in sep["pairs"]} == {"better"}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["greedy", "random", "--top", "2"], "--top goes with --until-separated"),
        (["greedy", "random", "--budget", "9"], "--budget goes with --until-separated"),
        (["greedy", "random", "--gauntlet", "random"], "--gauntlet plays one bot against a field"),
        (["greedy", "--gauntlet", "random", "random", "--until-separated", "-k", "2,3"], "plays one table size"),
        (["greedy", "random", "--until-separated", "--confidence", "1.5"], "below 1"),
    ],
)
def test_bad_adaptive_options_one_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["tournament", *argv, "--db", str(tmp_path / "x.sqlite")])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "x.sqlite").exists()


def test_standings_formats(reference: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "f.sqlite"
    assert main(["tournament", "greedy", "random", "random", "--games", "2", "--seed", "2", "-q", "--db", str(db)]) == 0
    capsys.readouterr()
    code, table, _ = run_cli(capsys, "standings", "--db", str(db), "--format", "table")
    assert code == 0 and "Ranked by score" in table and "95% interval" in table and "Separation" in table
    code, md, _ = run_cli(capsys, "standings", "--db", str(db), "--format", "markdown")
    assert code == 0 and md.startswith("## Overall") and "| rank |" in md.replace("  ", " ") or "|   rank |" in md
    assert "|--" in md or "|:-" in md or "| --" in md
    code, text, _ = run_cli(capsys, "standings", "--db", str(db), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    code, out, _ = run_cli(capsys, "standings", "--db", str(db), "--format", "json")
    doc = json.loads(out)
    assert [r["bot"] for r in rows] == [r["bot"] for r in doc["overall"]["standings"]]
    assert all(r["scope"] == "overall" for r in rows)
    assert [float(r["score"]) for r in rows] == [r["score"] for r in doc["overall"]["standings"]]
    code, again, _ = run_cli(capsys, "standings", "--db", str(db), "--json")
    assert json.loads(again) == doc
    code, positional, _ = run_cli(capsys, "standings", str(db), "--json")  # the database may be named without --db
    assert code == 0 and json.loads(positional) == doc
    code, _, err = run_cli(capsys, "standings", str(db), "--db", str(tmp_path / "other.sqlite"))
    assert code == 2 and "two databases given" in err and not (tmp_path / "other.sqlite").exists()
    with pytest.raises(SystemExit) as exc:
        main(["standings", "--db", str(db), "--format", "yaml"])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_adaptive_run_prints_and_stores_the_sandbox_layers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bot file plays sandboxed: the adaptive run prints the layers line and stores the layers
    in the database's meta, as the fixed runner does (tests/cli/test_limits_cli.py)."""
    import sqlite3

    db = tmp_path / "s.sqlite"
    bot = Path(__file__).parents[2] / "bots" / "greedy.py"
    code, _, err = run_cli(
        capsys, "tournament", str(bot), "random", "--players", "2", "--until-separated", "--budget", "8",
        "--seed", "3", "--workers", "1", "--no-h2h", "--db", str(db),
    )  # fmt: skip
    assert code == 0, err
    line = next(x for x in err.splitlines() if x.startswith("sandbox: "))
    with sqlite3.connect(db) as conn:
        sandbox = json.loads(dict(conn.execute("SELECT key, value FROM meta").fetchall())["sandbox"])
    active = [k for k, v in sandbox["layers"].items() if v == "active"]
    assert {"seccomp", "fresh_process", "cpu_time"} <= set(sandbox["layers"])
    assert line.startswith(f"sandbox: {len(active)}/{len(sandbox['layers'])} layers active")
    assert sandbox["missing"] == [k for k in sandbox["layers"] if k not in active]


def _block(bot_scores: dict[int, float], size: int, table: int = 0) -> list[Any]:
    """One block's games in which each bot of ``bot_scores`` places so as to get that block score
    (scores of a 2-player table: 1, 0.5 or 0; one game per rotation)."""
    from arena.tournament.plan.schedule import GameKey
    from arena.tournament.results.finished import GameResult, SeatResult

    bots = sorted(bot_scores)
    games = []
    for r in range(size):
        seats = []
        for bot in bots:
            s = bot_scores[bot]
            place = 1 if s == 1 else size if s == 0 else (1 if r % 2 == 0 else size)
            seats.append(SeatResult(bot, place, 0, False, 0, False))
        games.append(GameResult(GameKey(size, table, 0, r), tuple(seats)))
    return games


def test_holm_step_down_lowers_the_bar_after_each_claim() -> None:
    """The first claim needs Bonferroni's wealth over all 2 x 3 directional claims; once it is
    made, the next needs (M - 1) / alpha, not M / alpha."""
    import math

    design = Design(3, 2, ((0, 1), (0, 2), (1, 2)))
    state = State(design)
    assert state._family == [(0, 1), (0, 2), (1, 2)]
    bar = [math.log((6 - k) / 0.05) for k in range(3)]
    state.tests[(0, 2)].best = [(bar[0] + bar[1]) / 2, 0.0]  # between the first bar and the second
    state._step_down()
    assert state.decided[(0, 2)] == 0 and state.rejected == 0  # Bonferroni's bar is not reached
    state.tests[(1, 2)].best = [0.0, bar[0] + 0.01]  # "2 above 1" clears the first bar...
    state._step_down()
    assert state.decided == {(0, 1): 0, (0, 2): 1, (1, 2): -1} and state.rejected == 2  # ...and (0, 2) the second
    legacy = State(Design(3, 2, ((0, 1), (0, 2), (1, 2)), method=LEGACY_METHOD))
    for _ in range(40):  # the legacy method decides each pair on its own at alpha / 3
        legacy.absorb((0, 0), _block({0: 1.0, 1: 0.0}, 2))
    assert legacy.decided[(0, 1)] == legacy.tests[(0, 1)].decided == 1 and legacy.rejected == 0


def test_equal_bots_are_never_claimed_apart() -> None:
    """Null world: four bots whose paired differences all have mean 0; the step-down's claims,
    looked at after every block, are wrong whenever made. At most 5% of runs may make one."""
    import itertools
    import random

    tables = tuple(itertools.combinations(range(4), 2))
    claims = 0
    for run in range(30):
        rng = random.Random(run)
        state = State(Design(4, 2, tables))
        for _ in range(150):
            t = rng.randrange(len(tables))
            a, b = tables[t]
            win = rng.random() < 0.5
            state.absorb((t, 0), _block({a: 1.0 if win else 0.0, b: 0.0 if win else 1.0}, 2, t))
        claims += state.rejected > 0
    assert claims <= 1


def test_the_method_is_stored_and_a_legacy_database_replays_with_its_own(tmp_path: Path) -> None:
    from arena.tournament.db.read import stored_method
    from arena.tournament.plan import adaptive
    from arena.tournament.plan.adaptive import METHOD, design_of

    assert Design(3, 2, ((0, 1),)).settings()["method"] == METHOD
    settings = {"sizes": [2], "adaptive": {"first_deals": 1, "confidence": 0.95}}
    assert design_of(settings, 2, [(0, 1)]).method == LEGACY_METHOD  # older databases stored no other
    with pytest.raises(ValueError, match="unknown sequential method"):
        Design(2, 2, ((0, 1),), method="bogus")
    assert Design(5, 3, (), method=LEGACY_METHOD).test().__class__.__name__ == "SignTest"
    # a legacy database (made as before) resumes with its method: the CLI reads it back
    db = tmp_path / "old.sqlite"
    from arena.game.rules import CONTEST
    from arena.tournament.runner import local_backend, plan

    p = plan(["greedy", "random", "random"], sizes=[2], deals=1, seed=9, rules=CONTEST, trusted=True)
    size = p.schedule.sizes[0]
    old = Design(3, 2, size.tables, method=LEGACY_METHOD)
    adaptive.run(p, old, str(db), local_backend(1), budget=40)
    assert stored_method(str(db)) == LEGACY_METHOD and stored_method(str(tmp_path / "none")) is None
    code = main(["tournament", "greedy", "random", "random", "--players", "2", "--seed", "9", "-q", "--until-separated",
                 "--budget", "60", "--trusted", "--workers", "1", "--db", str(db)])  # fmt: skip
    assert code == 0  # not refused as "other settings"
    with __import__("sqlite3").connect(db) as conn:
        settings_now = json.loads(dict(conn.execute("SELECT key, value FROM meta").fetchall())["settings"])
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 60
    assert settings_now["adaptive"]["method"] == LEGACY_METHOD


def test_a_slow_pair_is_spread_over_the_tables_it_can_meet_at(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pair kept at one table where it is even would never be decided: once it has had
    SPREAD_AFTER blocks, its next blocks go to its less-used tables, though the busy table
    holds more of the open pairs."""
    from arena.tournament.plan import adaptive

    def build() -> State:
        tables = ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3))
        state = State(Design(4, 3, tables))
        for t, table in enumerate(tables):  # the first round: one block per table
            state.absorb((t, 0), _block({b: [1.0, 0.5, 0.0][i] for i, b in enumerate(table)}, 3, t))
        for deal in range(1, 41):  # bots 1 and 2 even at table 3, bot 3 last
            state.absorb((3, deal), _block({1: 0.5, 2: 0.5, 3: 0.0}, 3, 3))
            state.deals[3] = deal + 1
        for deal in range(1, 502):  # bots 0, 1 and 2 even at table 0
            state.absorb((0, deal), _block({0: 0.5, 1: 0.5, 2: 0.5}, 3))
            state.deals[0] = deal + 1
        return state

    state = build()
    assert adaptive.SPREAD_AFTER < state.tests[(0, 1)].n < state.tests[(1, 2)].n
    assert state.uncertain() == [(0, 1), (1, 2)]  # table 0 holds both, table 1 only (0, 1)
    assert [t for t, _ in state.next_round()] == [1, 1]
    monkeypatch.setattr(adaptive, "SPREAD_AFTER", 10**9)
    assert [t for t, _ in build().next_round()] == [0, 0]  # without the rule: table 0 again
