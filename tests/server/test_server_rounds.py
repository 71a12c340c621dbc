"""Round two (issue 21, item 5): `arena contest round` picks the field from round one (the published
final's standings, else the ladder's ratings), stores the round's rules, and the ladder then plays
the gauntlet (a new submission against field bots) under them, rated per round; refusals are one
line; the round survives a restart and its opening is all or nothing; older databases upgrade."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest
from support.server import ROOT, arena

from arena.game.rules import Rules
from arena.server.contest import final, lineup, rounds
from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.ladder.matchmaker import LadderEntrant, LadderPlayer
from arena.server.store import database as store
from arena.server.store import migrate

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

GREEDY = (ROOT / "bots" / "greedy.py").read_text()


def source(name: str) -> bytes:
    return GREEDY.replace('name = "greedy"', f'name = "{name}"').encode()


def upload(db: sqlite3.Connection, author: str, bot: str, approve: bool = True) -> int:
    row = db.execute("SELECT id FROM authors WHERE name = ?", (author,)).fetchone()
    aid = int(row[0]) if row else int(store.invite(db, author).split(".")[0][1:])
    sid = store.add_submission(db, aid, bot, source(bot))
    store.finish_check(db, sid, {"clean": True}, None)  # the check itself is tested in test_server.py
    if approve:
        store.review(db, sid, "approved", "")
    return sid


def ladder_results(db: sqlite3.Connection, order: list[int], games: int = 6) -> None:
    """Round-one ladder games, cheaply: stored and rated as a worker would, the places fixed by ``order``."""
    for g in range(games):
        block = store.new_block(db, order, 1)
        seating = order[g % len(order) :] + order[: g % len(order)]
        places = [order.index(s) + 1 for s in seating]
        assert store.record_game(db, f"b{block}-r0", block, 0, seating, places, [0] * len(order), [], [])


@pytest.fixture(scope="module")
def round_one(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A contest after round one: four approved bots and one pending, all rated on the ladder
    (best first: dot, ann, ben, cat; eve is pending), submissions frozen."""
    folder = tmp_path_factory.mktemp("r1") / "cup"
    store.init_contest(folder, "Cup")
    db = store.open_db(folder)
    ids = {name: upload(db, name, f"{name}bot", approve=name != "eve") for name in ("ann", "ben", "cat", "dot", "eve")}
    ladder_results(db, [ids[n] for n in ("eve", "dot", "ann", "ben", "cat")])
    store.set_setting(db, "frozen", "1")
    db.close()
    return folder


def copy_of(folder: Path, to: Path) -> Path:
    shutil.copytree(folder, to)
    return to


def test_the_gauntlet_matchmaker_seats_one_new_bot_against_the_field() -> None:
    rng = random.Random(21)
    new = [LadderEntrant(10, "n1", 25.0, 8.3, 0), LadderEntrant(11, "n2", 25.0, 2.0, 40)]
    field = [LadderEntrant(i, f"f{i}", 20.0 + i, 3.0, 30) for i in range(1, 5)]
    seen: dict[int, int] = {}
    sizes = set()
    for _ in range(300):
        table = rounds.pick_gauntlet(new, field, rng, [2, 3, 4, 5, 6])
        newcomers = [s for s in table if s >= 10]
        assert len(newcomers) == 1 and len(set(table)) == len(table)  # never two new bots at a table
        assert set(table) - {10, 11} <= {1, 2, 3, 4}
        seen[newcomers[0]] = seen.get(newcomers[0], 0) + 1
        sizes.add(len(table))
    assert sizes == {2, 3, 4, 5}  # at most the whole field and one new bot
    assert seen[10] > 3 * seen[11] > 0  # the new and uncertain first, the settled still played
    assert {len(rounds.pick_gauntlet(new, field, rng, [4])) for _ in range(20)} == {4}  # the rules' sizes only
    assert rounds.pick_gauntlet([], field, rng, [2, 3]) == [] and rounds.pick_gauntlet(new, [], rng, [2]) == []
    assert rounds.pick_gauntlet(new, field[:1], rng, [4, 5]) == []  # a field too small for these rules


def test_contest_round_refuses_bad_input_in_one_line(round_one: Path, tmp_path: Path) -> None:
    from arena.cli import main

    folder = copy_of(round_one, tmp_path / "cup")
    fresh = tmp_path / "fresh"
    store.init_contest(fresh, "Fresh")
    cases = [
        (["--field", "2", "--rule", "colour=red"], "unknown rule setting"),
        (["--field", "2", "--rule", "hand_size=many"], "hand_size takes a whole number"),
        (["--field", "2", "--rule", "hand_size=9"], "hand_size must be 1 to 7"),
        (["--field", "2", "--variant", "nosuch"], "unknown variant"),
        (["--field", "0"], "expected at least 1"),
        # eve is pending: not one of round one's results
        (["--field", "5", "--no-final"], "has rated only 4 approved authors' bots (dotbot, annbot, benbot, catbot)"),
        (["--field", "1", "--variant", "teams", "--no-final"], "no table of 2 to 2 players"),
        (["--field", "2"], "the round-one final has not been published"),  # never silently without a final
    ]
    for extra, why in cases:
        done = arena_main(main, ["contest", "round", str(folder), *extra])
        assert done[0] == 2 and why in done[1] and done[1].count("\n") == 1, (extra, done)
    for where, why in ((fresh, "no round-one results"), (tmp_path / "nowhere", "no contest here")):
        done = arena_main(main, ["contest", "round", str(where), "--field", "1", "--no-final"])
        assert done[0] == 2 and why in done[1] and done[1].count("\n") == 1, done
    db = store.open_db(folder)
    assert rounds.current_number(db) == 1 and store.setting(db, "frozen") == "1"  # nothing changed
    db.close()


def arena_main(main: Any, argv: list[str]) -> tuple[int, str]:
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse's own refusals
            status = exc.code
    return int(status or 0), err.getvalue()


@pytest.fixture(scope="module")
def round_two(round_one: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Round two opened as users open it, by the ladder's ratings, with hand_size 6."""
    folder = copy_of(round_one, tmp_path_factory.mktemp("r2") / "cup")
    db = store.open_db(folder)
    before = rounds.leaderboard(db, 1)
    db.close()
    done = arena("contest", "round", str(folder), "--field", "3", "--rule", "hand_size=6", "--no-final", timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "round 2 is open" in lines[0] and "hand_size=6" in lines[0]
    assert "ladder's ratings" in lines[1] and [line.split()[1] for line in lines[2:5]] == ["dotbot", "annbot", "benbot"]
    assert "round one has no final (--no-final)" in done.stdout
    again = arena("contest", "round", str(folder), "--field", "3", "--no-final", timeout=60)
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "round 2 is open already" in again.stderr
    (folder / "round-one.json").write_text(json.dumps(before))
    return folder


def test_round_two_keeps_its_field_rules_and_reopens_uploads(round_two: Path) -> None:
    db = store.open_db(round_two)
    rnd = rounds.get_round(db)
    assert rnd.number == 2 and rnd.picked_by == "ladder" and rnd.rules.hand_size == 6 and rnd.sizes == [2, 3, 4, 5]
    shas = [db.execute("SELECT sha256 FROM field WHERE submission = ?", (s,)).fetchone()[0] for s in rnd.field]
    held = [bytes(store.submission(db, s)["source"]) for s in rnd.field]  # type: ignore[index]
    assert shas == [hashlib.sha256(b).hexdigest() for b in held] and b'"dotbot"' in held[0]
    assert store.setting(db, "frozen") == "0"  # authors may upload again
    assert "round one has no final" in str(lineup.can_start(db, 1))  # and never will: round two is open
    db.close()


def test_a_field_bot_plays_the_gauntlet_under_the_tweaked_rule(round_two: Path, tmp_path: Path) -> None:
    folder = copy_of(round_two, tmp_path / "cup")
    db = store.open_db(folder)
    newbie = upload(db, "fay", "faybot", approve=False)  # pending review: it plays, as in round one
    round_one_ratings = db.execute("SELECT * FROM ratings WHERE round = 1 ORDER BY submission").fetchall()
    player = LadderPlayer(db)
    try:
        assert player.play_block(random.Random(5)) >= 2
    finally:
        player.close()
    rnd = rounds.get_round(db)
    games = db.execute("SELECT seating, faults, log FROM games g JOIN blocks b ON b.id = g.block WHERE b.round = 2")
    for seating, faults, log in games.fetchall():
        seats = json.loads(seating)
        assert newbie in seats and set(seats) - {newbie} <= set(rnd.field)
        assert json.loads(faults) == []  # a round-one bot under hand_size 6: no fault
        header = store.unpack(log)[0]
        assert header["rules"]["hand_size"] == 6
        deal = next(e for e in store.unpack(log) if e.get("event") == "deal")
        assert all(len(hand) == 6 for hand in deal["hands"])
    assert db.execute("SELECT * FROM ratings WHERE round = 1 ORDER BY submission").fetchall() == round_one_ratings
    assert db.execute("SELECT COUNT(*) FROM ratings WHERE round = 2 AND games > 0").fetchone()[0] >= 2
    db.close()


def test_a_round_two_upload_is_checked_under_the_rounds_rules(
    round_two: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.authoring.check import CheckSettings
    from arena.server.contest import checks

    folder = copy_of(round_two, tmp_path / "cup")
    db = store.open_db(folder)
    author = int(store.invite(db, "gil").split(".")[0][1:])
    sid = store.add_submission(db, author, "gilbot", source("gilbot"))
    seen = []
    monkeypatch.setattr(checks, "check_one", lambda row, settings, *_: (seen.append(settings.rules), ({}, None, []))[1])
    assert checks.run_queue(db, CheckSettings(games=1), 1)
    assert seen == [Rules(hand_size=6)] and rounds.round_of(db, sid) == 2 and rounds.round_of(db, 1) == 1
    db.close()


def test_the_leaderboard_is_kept_per_round_and_a_restart_keeps_the_round(round_two: Path) -> None:
    before = json.loads((round_two / "round-one.json").read_text())
    for _ in range(2):  # the server started twice over the same folder: the round is stored
        with TestClient(create_app(ServerSettings(round_two, workers=False))) as client:
            now = client.get("/api/leaderboard").json()
            assert now["round"] == 2 and now["rules"] == {"hand_size": 6} and now["field_from"] == "ladder"
            assert [b["bot"] for b in now["bots"] if b["field"]] == ["annbot", "benbot", "dotbot"]  # all level
            assert client.get("/api/leaderboard?round=2").json() == now
            one = client.get("/api/leaderboard?round=1").json()
            assert {k: v for k, v in one.items() if k not in ("current_round", "frozen")} == {
                k: v for k, v in before.items() if k not in ("current_round", "frozen")
            }
            for bad in ("3", "0", "x", "1" * 40, "-1"):
                answer = client.get(f"/api/leaderboard?round={bad}")
                assert answer.status_code == 404 and set(answer.json()) == {"error"}, bad
            page = client.get("/").text
            assert "Leaderboard, round 2" in page and "hand_size = 6" in page
            assert 'data-round="2"' in page and "/ws/leaderboard" in page
            past = client.get("/?round=1").text
            assert "Leaderboard, round 1" in past and "/ws/leaderboard" not in past  # a past round is not live


def test_a_bot_listed_twice_in_round_two_is_explained_on_the_page(round_two: Path, tmp_path: Path) -> None:
    folder = copy_of(round_two, tmp_path / "cup")
    with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
        assert "A bot listed twice" not in client.get("/").text
    db = store.open_db(folder)
    new = upload(db, "ann", "annbot")  # a new version of a field bot: both play round two
    db.close()
    with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
        board = client.get("/api/leaderboard").json()["bots"]
        assert [(b["submission"] == new, b["field"]) for b in board if b["bot"] == "annbot"] in (
            [(True, False), (False, True)],
            [(False, True), (True, False)],
        )
        page = client.get("/").text
        assert (
            "A bot listed twice is its new version, playing the field, and its round-one version in the field" in page
        )


def test_a_bots_rating_chart_draws_its_latest_rounds_games_only(round_two: Path, tmp_path: Path) -> None:
    from arena.server.routes.pages import bot_data

    folder = copy_of(round_two, tmp_path / "cup")
    db = store.open_db(folder)
    sub = {r[0]: r[1] for r in db.execute("SELECT bot, id FROM submissions")}
    one = bot_data(db, "annbot", None)
    assert one is not None and one["history"]["round"] == 1 and len(one["history"]["points"]) == 6 + 1  # and its start
    assert not one["history"]["earlier"]
    table = [sub["annbot"], sub["dotbot"]]
    for g in range(3):  # round two's ratings start again: its points are another line
        block = store.new_block(db, table, 2)
        assert store.record_game(db, f"b{block}-r0", block, 0, table, [1 + g % 2, 2 - g % 2], [0, 0], [], [])
    two = bot_data(db, "annbot", None)
    assert two is not None and two["history"]["round"] == 2 and two["history"]["earlier"]
    assert len(two["history"]["points"]) == 3 + 1 and two["games"]["total"] == 9
    db.close()
    with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
        page = client.get("/bots/annbot").text
        assert "annbot v1, round 2: rating after each game" in page and "games of earlier rounds are not drawn" in page


def test_opening_a_round_is_all_or_nothing(round_one: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The attack: the opening dies half-way (as a kill -9 would stop it). Nothing of the round is kept.
    folder = copy_of(round_one, tmp_path / "cup")
    db = store.open_db(folder)
    snapshot = {t: db.execute(f"SELECT * FROM {t}").fetchall() for t in ("rounds", "field", "ratings", "contest")}

    def dies(*args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(rounds, "_pick", dies)
    with pytest.raises(KeyboardInterrupt):
        rounds.open_round(db, folder, 2, Rules(), "contest", [], no_final=True)
    assert {t: db.execute(f"SELECT * FROM {t}").fetchall() for t in snapshot} == snapshot
    db.close()


def test_the_field_comes_from_the_published_final(round_one: Path, tmp_path: Path) -> None:
    from arena.cli import main

    folder = copy_of(round_one, tmp_path / "cup")
    db = store.open_db(folder)
    entrants = lineup.pool(db, 1)
    home = final.home(folder, 1)
    bots = home / "bots"
    bots.mkdir(parents=True)
    for e in entrants:
        (bots / f"{e.label}.py").write_bytes(bytes(store.submission(db, e.submission)["source"]))  # type: ignore[index]
    tournament = ["tournament", str(bots), "--players", "4", "--games", "1", "--seed", "7", "--trusted", "--quiet"]
    assert arena_main(main, [*tournament, "--db", str(home / "final.sqlite")])[0] == 0
    final.set_state(db, 1, state="published", entrants=[e.label for e in entrants])
    published = {p: p.read_bytes() for p in (folder / "final").rglob("*") if p.is_file()}
    order = rounds.final_order(db, folder)
    from arena.tournament.results.resultset import load_results

    ranked = load_results(home / "final.sqlite").doc["overall"]["standings"]
    assert [store.submission(db, s)["bot"] for s in order] == [r["bot"] for r in ranked]  # type: ignore[index]
    # a final that is not this contest's (a bot this contest never held) is refused in one line
    foreign = tmp_path / "foreign"
    shutil.copytree(folder, foreign)
    with sqlite3.connect(final.home(foreign, 1) / "final.sqlite") as t:
        t.execute("UPDATE bots SET sha256 = ? WHERE bot = 0", ("ab" * 32,))
    with pytest.raises(store.ContestError, match="no version uploaded to this contest"):
        rounds.final_order(db, foreign)
    rnd, picks = rounds.open_round(db, folder, 2, Rules(limit=60), "contest", ["limit=60"])
    assert rnd.picked_by == "final" and list(rnd.field) == order[:2] and [p.submission for p in picks] == order[:2]
    # the published final stays as it was, and is not run again
    assert {p: p.read_bytes() for p in (folder / "final").rglob("*") if p.is_file()} == published
    assert final.state(db)["state"] == "published" and "kept as it was run" in str(lineup.can_start(db, 1))
    db.close()


SCHEMA_ONE_ROWS = [
    "INSERT INTO authors VALUES (1, 'ann', 'x', 0)",
    "INSERT INTO submissions (id, author, bot, version, sha256, source, created, status, review) "
    "VALUES (1, 1, 'annbot', 1, 's', x'00', 0, 'clean', 'approved')",
    "INSERT INTO submissions (id, author, bot, version, sha256, source, created, status, review) "
    "VALUES (2, 1, 'annbis', 1, 's', x'00', 0, 'clean', 'pending')",
    "INSERT INTO bots VALUES ('annbot', 1, 1)",
    "INSERT INTO bots VALUES ('annbis', 1, 2)",
    "INSERT INTO ratings VALUES (1, 30.0, 5.0, 7)",
    "INSERT INTO ratings VALUES (2, 20.0, 5.0, 7)",
    "INSERT INTO blocks VALUES (1, 2, '[1, 2]', 0)",
]


def test_a_contest_database_from_before_rounds_opens_upgraded(tmp_path: Path) -> None:
    # A schema-1 database (as the server wrote it before rounds) with its ratings: it opens, upgraded
    # in place, round one's ratings and blocks intact; an unknown schema is still refused.
    folder = tmp_path / "old"
    folder.mkdir()
    old = sqlite3.connect(folder / "contest.db", isolation_level=None)
    old.executescript("PRAGMA journal_mode = WAL; BEGIN;" + store.SCHEMA + "COMMIT;")
    old.executemany("INSERT INTO contest VALUES (?, ?)", [("schema", "1"), ("name", "Old"), ("frozen", "1")])
    for row in SCHEMA_ONE_ROWS:
        old.execute(row)
    old.close()
    db = store.open_db(folder)
    assert migrate.version(db) == migrate.LATEST
    board = rounds.leaderboard(db)
    assert [(b["bot"], b["mu"], b["games"]) for b in board["bots"]] == [("annbot", 30.0, 7), ("annbis", 20.0, 7)]
    assert [tuple(r) for r in db.execute("SELECT round FROM blocks")] == [(1,)]
    db.close()
    again = store.open_db(folder)  # upgraded once: a second open changes nothing
    assert rounds.leaderboard(again) == board
    again.execute("UPDATE contest SET value = '99' WHERE key = 'schema'")
    again.close()
    with pytest.raises(store.ContestError, match="schema '99'"):
        store.open_db(folder)


def test_a_tampered_round_is_refused_never_a_500(round_two: Path, tmp_path: Path) -> None:
    # The contest database is the organiser's, but hostile all the same: damaged rules, a past round's
    # entrants list of garbage (or past SQLite's variable limit), a round number that is not one.
    folder = copy_of(round_two, tmp_path / "cup")
    db = store.open_db(folder)
    huge = json.dumps(list(range(100_000)) + ["x", None, 1.5, [2]])
    db.execute("UPDATE rounds SET closed = ? WHERE number = 1", (huge,))
    assert [b["bot"] for b in rounds.leaderboard(db, 1)["bots"]] == [
        f"{n}bot" for n in ("eve", "dot", "ann", "ben", "cat")
    ]
    db.execute("UPDATE rounds SET closed = '[[[[' WHERE number = 1")
    assert rounds.leaderboard(db, 1)["bots"] == []
    db.execute("UPDATE rounds SET rules = ? WHERE number = 2", ('{"hand_size": 99, "colour": 1}',))
    with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
        for path in ("/api/leaderboard", "/api/leaderboard?round=2", "/"):
            answer = client.get(path)
            assert answer.status_code == 404 and "round 2's stored rules are damaged" in answer.json()["error"]
        assert client.get("/api/leaderboard?round=1").status_code == 200
    player = LadderPlayer(db)
    assert player.play_block(random.Random(1)) == 0  # nothing played under rules it cannot read
    player.close()
    db.execute("UPDATE contest SET value = 'two' WHERE key = 'round'")
    assert rounds.current_number(db) == 1
    db.close()
