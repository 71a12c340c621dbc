"""The teams variant in tournaments (issue 18, item 8): partnerships as entrants, partners
opposite in every game, each team in every seat position once per deal, standings per team
(docs/RULINGS.md, rulings 76 and 77), and a teams database checked like every other."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import run as cli

from arena.cli import main
from arena.game.engine import place_seats
from arena.game.rules import Rules
from arena.tournament.plan.schedule import GameKey, Schedule
from arena.tournament.results.finished import GameResult, SeatResult
from arena.tournament.results.teams import Team, team_games
from arena.tournament.runner import local_backend, plan, run

TEAMS = ["greedy", "random", "heuristic"]
ARGS = ["--variant", "teams", "-n", "1", "--seed", "5", "-j", "1", "-q"]


def standings(capsys: pytest.CaptureFixture[str], db: Path) -> dict[str, Any]:
    code, out, err = cli(capsys, "standings", str(db), "--json")
    assert code == 0, err
    doc = json.loads(out)
    doc.pop("db")
    return dict(doc)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted teams tournament: 3 single-bot teams and a named pair, 4 seats."""
    db = tmp_path_factory.mktemp("teams") / "ref.sqlite"
    assert main(["tournament", *TEAMS, "--team", "mixed=heuristic,random", *ARGS, "--db", str(db)]) == 0
    return db


# -- the schedule ---------------------------------------------------------------


@pytest.mark.parametrize(("teams", "size", "max_tables"), [(3, 4, 2000), (4, 6, 2000), (7, 4, 5), (5, 6, 4)])
def test_partners_sit_opposite_and_each_team_takes_every_seat(teams: int, size: int, max_tables: int) -> None:
    pairs = [(2 * t, 2 * t + 1) for t in range(teams)]
    schedule = Schedule.build(2 * teams, [size], deals=3, seed=11, max_tables=max_tables, teams=pairs)
    team_of = {m: t for t, pair in enumerate(pairs) for m in pair}
    half = size // 2
    seen: dict[tuple[int, int, int], list[tuple[int, ...]]] = {}
    for key in schedule.keys():
        seating = schedule.seating(key)
        assert sorted(seating) == sorted(schedule.by_size(size).tables[key.table])  # whole teams at the table
        for s in range(half):  # R9.1 with teams: seat i partners seat i + K/2
            assert team_of[seating[s]] == team_of[seating[s + half]]
        assert schedule.game_seed(key) == schedule.game_seed(key._replace(rotation=0))  # duplicate: one deal
        seen.setdefault((key.size, key.table, key.deal), []).append(seating)
    for seatings in seen.values():
        assert len(seatings) == size
        for pair in {tuple(sorted(p)) for p in pairs if p[0] in seatings[0]}:
            first = [seating.index(pair[0]) for seating in seatings]
            assert sorted(first) == list(range(size))  # ruling 76: every seat position once
    # a teams schedule is the schedule of teams: the tables are exactly the teams' combinations
    counts = [sum(1 for t in schedule.by_size(size).tables if a in t) for a, _ in pairs]
    assert max(counts) - min(counts) <= 1


def test_same_seed_same_schedule_other_seed_other_order() -> None:
    pairs = [(0, 1), (2, 3), (4, 5)]
    a = Schedule.build(6, [4], deals=4, seed=1, teams=pairs)
    b = Schedule.build(6, [4], deals=4, seed=1, teams=pairs)
    c = Schedule.build(6, [4], deals=4, seed=2, teams=pairs)
    assert [a.seating(k) for k in a.keys()] == [b.seating(k) for k in b.keys()]
    assert [a.seating(k) for k in a.keys()] != [c.seating(k) for k in c.keys()]


# -- a team's result (ruling 76) --------------------------------------------------


def seats(scores: list[int], bots: list[int], retired: frozenset[int] = frozenset()) -> tuple[SeatResult, ...]:
    places = place_seats(scores, retired, teams=True)
    half = len(scores) // 2
    over = {s for s in range(len(scores)) if scores[s] > 125}
    over |= {(s + half) % len(scores) for s in over}
    return tuple(
        SeatResult(b, p, sc, s in over, int(s in retired), s in retired)
        for s, (b, p, sc) in enumerate(zip(bots, places, scores, strict=True))
    )


def test_a_team_result_is_its_shared_place_summed_score_and_loss() -> None:
    teams = [Team("a", (0, 1)), Team("b", (2, 3)), Team("c", (4, 5))]
    # seats 0..5: a1 b1 c1 a2 b2 c2; team sums a 50, b 130, c 20; b's first member is over the limit
    g = GameResult(GameKey(6, 0, 0, 0), seats([30, 130, 10, 20, 0, 10], [0, 2, 4, 1, 3, 5]))
    (t,) = team_games(teams, [g])
    by = {s.bot: s for s in t.seats}
    assert {k: (v.place, v.score, v.loser) for k, v in by.items()} == {
        0: (2, 50, False),
        1: (3, 130, True),
        2: (1, 20, False),
    }
    # equal sums share the better place; a team with a retired member goes after every other team
    g = GameResult(GameKey(4, 0, 0, 1), seats([10, 20, 20, 10], [0, 2, 1, 3]))
    assert sorted((s.bot, s.place) for s in team_games(teams, [g])[0].seats) == [(0, 1), (1, 1)]
    g = GameResult(GameKey(4, 0, 0, 2), seats([0, 90, 5, 0], [0, 2, 1, 3], frozenset({0})))
    out = {s.bot: s for s in team_games(teams, [g])[0].seats}
    assert out[0].place == 2 and out[0].retired and out[0].faults == 1 and out[1].place == 1


# -- end to end -----------------------------------------------------------------


def test_standings_rank_teams_with_their_members(reference: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = standings(capsys, reference)
    rows = doc["overall"]["standings"]
    assert doc["teams"] is True and doc["games"] == doc["total"] == 6 * 1 * 4  # C(4,2) tables x 1 deal x 4 rotations
    assert sorted(r["bot"] for r in rows) == ["greedy", "heuristic", "mixed", "random"]
    assert {r["bot"]: r["members"] for r in rows}["mixed"] == ["heuristic#3", "random#3"]
    assert [r["rank"] for r in rows] == [1, 2, 3, 4] and all(r["games"] == 12 for r in rows)
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) > 1
    code, out, _ = cli(capsys, "standings", str(reference))
    assert code == 0 and "team" in out.splitlines()[1] and "heuristic#3 + random#3" in out
    code, out, _ = cli(capsys, "standings", str(reference), "--format", "csv")
    assert out.splitlines()[0].startswith("scope,rank,team,members,")
    assert "mixed,heuristic#3 + random#3," in out
    code, out, _ = cli(capsys, "standings", str(reference), "--format", "markdown")
    assert "| team " in out and "| members " in out


def test_same_seed_same_results(reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "again.sqlite"
    code, _, err = cli(capsys, "tournament", *TEAMS, "--team", "mixed=heuristic,random", *ARGS, "--db", str(db))
    assert code == 0, err
    assert standings(capsys, db) == standings(capsys, reference)


def interrupting(after: int) -> Any:
    """The local backend, but Ctrl-C arrives after ``after`` batches (the loop's own path)."""
    inner = local_backend(1)

    def backend(job: Any, keys: Any, stop: Any, more: Any = None) -> Any:
        def batches() -> Iterator[Any]:
            source = inner(job, keys, stop, more)
            try:
                for n, batch in enumerate(source):
                    if n == after:
                        raise KeyboardInterrupt
                    yield batch
            finally:
                source.close()

        return batches()

    return backend


def test_resume_after_an_interruption_gives_identical_results(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "stopped.sqlite"
    rules = Rules.from_dict({"teams": True, "name": "teams"})
    p = plan(TEAMS, sizes=None, deals=1, seed=5, rules=rules, teams=["mixed=heuristic,random"])
    first = run(p, db, interrupting(2))  # of the local backend's few batches (whole streams)
    assert first.interrupted and 0 < first.done < first.total
    code, _, err = cli(capsys, "tournament", *TEAMS, "--team", "mixed=heuristic,random", *ARGS[:-1], "--db", str(db))
    assert code == 0 and f"resuming: {first.done} of 24 games" in err
    assert standings(capsys, db) == standings(capsys, reference)
    # other teams are another tournament: refused in one line, nothing written
    code, _, err = cli(capsys, "tournament", *TEAMS, "--team", "mixed=random,heuristic", *ARGS, "--db", str(db))
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"{db} holds a tournament" in err, err


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--team", "x=greedy"], "--team takes NAME=BOT1,BOT2"),
        (["--team", "x=greedy,random,heuristic"], "--team takes NAME=BOT1,BOT2"),
        (["--team", "=greedy,random"], "a team name is"),
        (["--team", "x\x1b[2J=greedy,random"], "a team name is"),
        (["--team", "greedy=greedy,random"], "a team named greedy is already entered"),
        (["--team", "x=greedy,random", "--team", "X=random,random"], "a team named X is already entered"),
        (["--team", "x=nosuchbot,random"], "nosuchbot"),
        (["--team", "x=.,random"], "is a folder"),
        (["--players", "6"], "a table of 6 needs at least 3 teams"),
        (["--players", "5"], "4 or 6 players"),
        (["--gauntlet", "random"], "does not go with the teams variant"),
        (["--until-separated"], "does not go with the teams variant"),
    ],
)
def test_bad_team_values_get_one_line(
    extra: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "tournament", "greedy", "random", *ARGS, *extra, "--db", "t.sqlite")
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and says in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # refused before any file is made


def test_team_needs_the_teams_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "tournament", "greedy", "--team", "x=greedy,random", "--db", str(tmp_path / "t"))
    assert code == 2 and "--team goes with the teams variant" in err and not (tmp_path / "t").exists()


def test_the_report_shows_teams(reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    code, _, err = cli(capsys, "report", "--db", str(reference), "--out", str(out), "-q")
    assert code == 0, err
    assert "otherwise than stored" not in err  # every game re-plays from the stored teams' seating
    page = (out / "index.html").read_text()
    assert "4 teams of two (8 bots), partners opposite" in page
    section = page.split('<section class="scope"')[1]
    order = [r["bot"] for r in standings(capsys, reference)["overall"]["standings"]]
    assert re.findall(r'<tr data-bot="[^"]*" data-team="([^"]*)"', section) == order
    assert '<th class="text">team</th><th class="text">members</th>' in section.replace("\n", "")
    assert 'data-member="heuristic#3">heuristic#3</a> + <a href="bots/bot-' in section


# -- the database is untrusted input ----------------------------------------------


def tampered(reference: Path, tmp_path: Path, sql: str, *params: Any) -> Path:
    db = tmp_path / "bad.sqlite"
    db.write_bytes(reference.read_bytes())
    conn = sqlite3.connect(db)
    conn.execute(sql, params)
    conn.commit()
    conn.close()
    return db


def settings_with(reference: Path, **changes: Any) -> str:
    conn = sqlite3.connect(reference)
    (text,) = conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
    conn.close()
    s = json.loads(text)
    s.update(changes)
    return json.dumps(s)


SET = "UPDATE meta SET value = ? WHERE key = 'settings'"


@pytest.mark.parametrize(
    ("teams", "says"),
    [
        ([{"team": "a", "members": [0, 1]}], "not a list of 2 to 5000 teams"),
        ("greedy", "not a list of 2 to 5000 teams"),
        ([{"team": "a", "members": [0, 1]}, {"team": "A", "members": [2, 3]}], "team name 'A' twice"),
        ([{"team": "a\u202e", "members": [0, 1]}, {"team": "b", "members": [2, 3]}], "is not a clean name"),
        ([{"team": "a", "members": [0, 1, 2]}, {"team": "b", "members": [3, 4]}], "are not two bot numbers"),
        ([{"team": "a", "members": [0, True]}, {"team": "b", "members": [2, 3]}], "are not two bot numbers"),
        ([{"team": "a", "members": [0, 1]}, {"team": "b", "members": [2, 3]}], "not each bot of the database once"),
        (
            [{"team": t, "members": [i, i + 1]} for t, i in (("a", 0), ("b", 0), ("c", 4), ("d", 6))],
            "not each bot of the database once",
        ),
        (
            [{"team": t, "members": [i, i + 99]} for t, i in (("a", 0), ("b", 2), ("c", 4), ("d", 6))],
            "not each bot of the database once",
        ),
    ],
)
def test_damaged_teams_are_one_line(
    teams: Any, says: str, reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tampered(reference, tmp_path, SET, settings_with(reference, teams=teams))
    for command in (["standings", str(db)], ["report", "--db", str(db), "--out", str(tmp_path / "site")]):
        code, _, err = cli(capsys, *command)
        assert code == 2 and "damaged tournament database" in err and says in err, err
        assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "site").exists()


def test_a_layout_that_breaks_partnerships_is_damage(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # teams that pair bots never seated opposite: every game then breaks a partnership
    odd = [{"team": t, "members": [a, b]} for t, a, b in (("a", 0, 2), ("b", 1, 3), ("c", 4, 6), ("d", 5, 7))]
    db = tampered(reference, tmp_path, SET, settings_with(reference, teams=odd))
    code, _, err = cli(capsys, "standings", str(db))
    assert code == 2 and ("is not whole teams" in err or "partners do not sit opposite" in err), err
    # one game's partners swapped with an opponent's seat: the game no longer seats partners opposite
    db = tmp_path / "swapped.sqlite"
    db.write_bytes(reference.read_bytes())
    conn = sqlite3.connect(db)
    (gid,) = conn.execute("SELECT MIN(id) FROM games").fetchone()
    bots = dict(conn.execute("SELECT seat, bot FROM results WHERE game_id = ?", (gid,)).fetchall())
    for seat, other in ((0, 1), (1, 0)):
        conn.execute("UPDATE results SET bot = ? WHERE game_id = ? AND seat = ?", (bots[other], gid, seat))
    conn.commit()
    conn.close()
    code, _, err = cli(capsys, "standings", str(db))
    assert code == 2 and "partners do not sit opposite" in err, err
    # teams in a database without the teams variant's rules
    rules = json.loads(settings_with(reference))["rules"] | {"teams": False}
    db = tampered(reference, tmp_path, SET, settings_with(reference, rules=rules))
    code, _, err = cli(capsys, "standings", str(db))
    assert code == 2 and "under the teams variant" in err, err
