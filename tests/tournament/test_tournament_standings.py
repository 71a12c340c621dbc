"""Standings math on a hand-made database: block confidence intervals, head-to-head with
ties, ratings in key order, and the database's own checks."""

from __future__ import annotations

import random
import sqlite3
import statistics
from pathlib import Path

import pytest

from arena.tournament.backends.games import GameRecord
from arena.tournament.db.database import BotRow, TournamentDB, TournamentDBError, open_readonly, read_bots, read_games
from arena.tournament.plan.schedule import GameKey, Schedule
from arena.tournament.results.standings import format_standings, mean_ci, standings_doc, t975

LABELS = ["a", "b", "c"]
BOTS = [BotRow(i, name, name, None, "registry", f"{i:064x}") for i, name in enumerate(LABELS)]


def record(
    key: GameKey,
    seating: tuple[int, ...],
    places: tuple[int, ...],
    faults: tuple[int, ...] = (0, 0, 0),
    losers: tuple[int, ...] = (),
) -> GameRecord:
    return GameRecord(
        key=key,
        seed=7,
        seating=seating,
        places=places,
        scores=tuple(10 * p for p in places),
        losers=losers,
        faults=faults,
        retired=(),
        rounds=3,
        moves=40,
        duration=0.01,
    )


# Three bots, one table of three, two deals, three rotations each.
# (seating per seat, places per seat) -> places per bot below
GAMES = [
    record(GameKey(3, 0, 0, 0), (0, 1, 2), (1, 2, 3)),  # a1 b2 c3
    record(GameKey(3, 0, 0, 1), (1, 2, 0), (1, 1, 3), losers=(2,)),  # b1 c1 a3  (tie b-c)
    record(GameKey(3, 0, 0, 2), (2, 0, 1), (2, 1, 3)),  # c2 a1 b3
    record(GameKey(3, 0, 1, 0), (0, 1, 2), (2, 1, 3)),  # a2 b1 c3
    record(GameKey(3, 0, 1, 1), (1, 2, 0), (3, 2, 1), faults=(0, 2, 0)),  # b3 c2 a1, c faulted twice
    record(GameKey(3, 0, 1, 2), (2, 0, 1), (1, 1, 1)),  # all tie
]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "t.sqlite"
    schedule = Schedule.build(3, [3], deals=2, seed=7)
    db = TournamentDB.open(path, {"seed": 7}, BOTS, schedule)
    shuffled = GAMES[:]
    random.Random(3).shuffle(shuffled)  # finishing order must not matter
    for g in shuffled[:2]:
        assert db.add([g], schedule) == 1
    assert db.add(shuffled[2:] + [GAMES[0], GAMES[1]], schedule) == 4  # games stored twice count once
    db.close()
    return path


def load(path: Path) -> dict:
    conn, _ = open_readonly(path)
    doc = standings_doc([b.label for b in read_bots(conn)], read_games(conn))
    conn.close()
    return doc


def row(doc: dict, bot: str, scope: str = "overall") -> dict:
    table = doc["overall"] if scope == "overall" else doc["by_size"][scope]
    return next(r for r in table["standings"] if r["bot"] == bot)


def test_counts_places_faults(db_path: Path) -> None:
    doc = load(db_path)
    assert doc["overall"]["games"] == 6 and doc["overall"]["blocks"] == 2
    a, b, c = (row(doc, x) for x in "abc")
    assert (a["games"], a["wins"], a["losses"]) == (6, 4, 1)  # places 1,3,1,2,1,1
    assert a["avg_place"] == pytest.approx(9 / 6)
    assert (b["wins"], c["wins"]) == (3, 2)  # b: 2,1,3,1,3,1  c: 3,1,2,3,2,1
    assert c["faults"] == 2 and a["faults"] == b["faults"] == 0


def test_score_interval_over_duplicate_blocks(db_path: Path) -> None:
    doc = load(db_path)
    # a's places: deal 0 -> 1,3,1 ; deal 1 -> 2,1,1 ; score (3 - place) / 2
    blocks = [statistics.mean([1, 0, 1]), statistics.mean([0.5, 1, 1])]
    a = row(doc, "a")
    assert a["score"] == pytest.approx(statistics.mean(blocks), abs=1e-6)
    # bootstrap over the two blocks: inside [0, 1], and within the range of the block means
    assert (a["score_lo"], a["score_hi"]) == (pytest.approx(min(blocks)), pytest.approx(max(blocks)))
    assert a["score_ci"] == pytest.approx(max(a["score"] - a["score_lo"], a["score_hi"] - a["score"]), abs=1e-5)
    assert a["blocks"] == 2
    assert [r["bot"] for r in doc["overall"]["standings"]] == ["a", "b", "c"]


def test_head_to_head_ties_count_half(db_path: Path) -> None:
    h2h = load(db_path)["overall"]["head_to_head"]
    # b vs c per game: b2<c3 ; b1=c1 ; c2<b3 ; b1<c3 ; c2<b3 ; b1=c1  -> b above in 2 + 2 halves
    assert h2h["b"]["c"] == {"above": pytest.approx(3 / 6), "games": 6}
    assert h2h["c"]["b"]["above"] == pytest.approx(3 / 6)
    # a vs b: a1<b2 ; b1<a3 ; a1<b3 ; b1<a2 ; a1<b3 ; tie -> 3 + 0.5
    assert h2h["a"]["b"]["above"] == pytest.approx(3.5 / 6)
    assert h2h["b"]["a"]["above"] == pytest.approx(2.5 / 6)


def test_ratings_do_not_depend_on_storage_order(db_path: Path, tmp_path: Path) -> None:
    other = tmp_path / "u.sqlite"
    schedule = Schedule.build(3, [3], deals=2, seed=7)
    db = TournamentDB.open(other, {"seed": 7}, BOTS, schedule)
    db.add(GAMES, schedule)
    db.close()
    first, second = load(db_path), load(other)
    assert first == second
    a = row(first, "a")
    assert a["mu"] > row(first, "c")["mu"] and a["ordinal"] == pytest.approx(a["mu"] - 3 * a["sigma"], abs=1e-5)


def test_per_size_scopes(db_path: Path) -> None:
    doc = load(db_path)
    assert list(doc["by_size"]) == ["3"] and doc["by_size"]["3"]["standings"] == doc["overall"]["standings"]
    text = format_standings(doc)
    assert "Overall: 6 games in 2 duplicate deals" in text and "head-to-head" in text
    assert "2 players" not in text


def test_t_quantiles_and_interval() -> None:
    assert t975(1) == 12.706 and t975(30) == 2.042
    assert t975(31) == pytest.approx(2.0395, abs=2e-4)
    assert t975(120) == pytest.approx(1.9799, abs=2e-4)
    assert t975(10**6) == pytest.approx(1.96, abs=1e-3)
    assert mean_ci([]) == (None, None)
    assert mean_ci([0.5]) == (0.5, None)
    mean, half = mean_ci([0.0, 1.0, 0.5, 0.5])
    assert mean == 0.5 and half == pytest.approx(3.182 * statistics.stdev([0, 1, 0.5, 0.5]) / 2)


def test_database_tables_are_queryable(db_path: Path) -> None:
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = conn.execute(
        "SELECT b.label, AVG(r.place) FROM results r JOIN bots b USING (bot) GROUP BY b.label ORDER BY b.label"
    ).fetchall()
    assert rows == [("a", pytest.approx(1.5)), ("b", pytest.approx(11 / 6)), ("c", pytest.approx(2))]
    assert conn.execute("SELECT game_key FROM games ORDER BY size, tbl, deal, rotation LIMIT 1").fetchone() == (
        "3p-t0-d0-r0",
    )
    assert conn.execute("SELECT COUNT(*) FROM games").fetchone() == (6,)
    assert conn.execute("SELECT id, game_key FROM games WHERE id IN (1, 6) ORDER BY id").fetchall() == [
        (1, "3p-t0-d0-r0"),
        (6, "3p-t0-d1-r2"),
    ]  # id = 1 + place in the schedule
    assert conn.execute("SELECT COUNT(*) FROM results").fetchone() == (18,)


def test_resume_checks(db_path: Path) -> None:
    schedule = Schedule.build(3, [3], deals=2, seed=7)
    before = db_path.read_bytes()
    with pytest.raises(TournamentDBError, match="other settings.*seed was 7, now 8"):
        TournamentDB.open(db_path, {"seed": 8}, BOTS, schedule)
    changed = [BOTS[0], BOTS[1], BotRow(2, "c", "c", "c.py", "file", "f" * 64)]
    with pytest.raises(TournamentDBError, match="bot c .* had other code"):
        TournamentDB.open(db_path, {"seed": 7}, changed, schedule)
    with pytest.raises(TournamentDBError, match="other bots .*missing c; new d"):
        TournamentDB.open(db_path, {"seed": 7}, BOTS[:2] + [BotRow(2, "d", "d", None, "registry", "0" * 64)], schedule)
    with pytest.raises(TournamentDBError, match="same bots in another order"):
        TournamentDB.open(db_path, {"seed": 7}, [BOTS[1], BOTS[0], BOTS[2]], schedule)
    with pytest.raises(TournamentDBError, match="another schedule"):
        TournamentDB.open(db_path, {"seed": 7}, BOTS, Schedule.build(3, [2], deals=2, seed=7))
    assert db_path.read_bytes() == before
    db = TournamentDB.open(db_path, {"seed": 7}, BOTS, schedule)
    assert db.finished() == {g.key for g in GAMES}
    db.close()


@pytest.mark.parametrize("content", [b"hello, not a database\n" * 10, b"SQLite format 3\x00" + b"\x07" * 200])
def test_not_a_database(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.sqlite"
    path.write_bytes(content)
    with pytest.raises(TournamentDBError, match="not"):
        TournamentDB.open(path, {}, BOTS, Schedule.build(3, [3], deals=1, seed=0))
    with pytest.raises(TournamentDBError):
        open_readonly(path)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.sqlite"]


def test_foreign_sqlite_database_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(TournamentDBError, match="not a tournament database .*people"):
        TournamentDB.open(path, {}, BOTS, Schedule.build(3, [3], deals=1, seed=0))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]
