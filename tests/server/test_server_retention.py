"""What the ladder keeps, and the disk it may use (issue 30, item 1): each version's latest games
whole, older ones reduced to their results, the ratings recomputed from what is kept equal to the
stored ones, the pages given back to the disk, and a served ladder that stays within
``--disk-budget`` with every result it stored intact."""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from support.server import Server, arena, bot_file, token_of, wait_for

from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.ladder import retention
from arena.server.ladder.matchmaker import LadderPlayer
from arena.server.store import database as store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


def stored_ratings(db: sqlite3.Connection) -> dict[tuple[int, int], tuple[float, float, int]]:
    rows = db.execute("SELECT round, submission, mu, sigma, games FROM ratings")
    return {(int(r), int(s)): (float(mu), float(sigma), int(g)) for r, s, mu, sigma, g in rows}


def results(db: sqlite3.Connection) -> dict[str, Any]:
    """Every game's result, as kept: its seats, places, scores, faults, and each seat's rating after it."""
    kept: dict[str, Any] = {}
    for key, seating, places, scores, faults in db.execute("SELECT key, seating, places, scores, faults FROM games"):
        kept[key] = [seating, places, scores, faults]
    for game, seat, sid, place, mu, sigma in db.execute("SELECT * FROM seats ORDER BY game, seat"):
        kept[game].append((seat, sid, place, mu, sigma))
    return kept


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A contest of three versions whose ladder played 1,200 games: 40 played here, sandboxed, and their
    records stored again as new games (new keys and blocks, the same places), as a long ladder would."""
    tmp = tmp_path_factory.mktemp("retention")
    folder = tmp / "cup"
    store.init_contest(folder, "Keep Cup")
    db = store.open_db(folder)
    for i, (name, base) in enumerate((("ann", "greedy"), ("bob", "random"), ("cy", "heuristic")), 1):
        store.invite(db, name)
        sid = store.add_submission(db, i, f"{name}bot", bot_file(tmp, f"{name}bot", base).read_bytes())
        store.finish_check(db, sid, {"clean": True}, None)
    player = LadderPlayer(db)
    try:
        while store.games_count(db) < 40:
            player.play_block(random.Random(store.games_count(db)))
    finally:
        player.close()
    originals = db.execute("SELECT * FROM games").fetchall()
    rng = random.Random(3)
    while store.games_count(db) < 1200:
        g = rng.choice(originals)
        seating = json.loads(g["seating"])
        block = store.new_block(db, seating)
        store.record_game(
            db,
            f"b{block}-r0",
            block,
            0,
            seating,
            json.loads(g["places"]),
            json.loads(g["scores"]),
            json.loads(g["faults"]),
            store.unpack(g["log"]),
        )
    db.close()
    return folder


def test_retention_keeps_each_versions_latest_games_whole_and_every_result(played: Path, tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    folder.mkdir()
    (folder / "contest.db").write_bytes((played / "contest.db").read_bytes())  # the WAL was checkpointed at close
    db = store.open_db(folder)
    before, ratings = results(db), stored_ratings(db)
    keep = retention.Retention(db, folder, keep=50)
    reduced = keep.prune()
    assert reduced > 1000 and retention.counts(db)["reduced"] == reduced
    assert results(db) == before  # every result, seat and rating after each game: the same
    assert retention.recompute(db) == ratings  # the ratings, recomputed from what is kept alone
    order = [k for (k,) in db.execute("SELECT key FROM game_order ORDER BY seq")]
    latest = {k for sid in (1, 2, 3) for k in [k for k in order if sid in seats_of(db, k)][-50:]}
    for key in latest:  # each version's latest 50: whole, a record the viewer can show
        log = store.unpack(db.execute("SELECT log FROM games WHERE key = ?", (key,)).fetchone()[0])
        assert log[0]["event"] == "game" and log[-1]["event"] == "end", key
    whole = {k for (k,) in db.execute("SELECT key FROM games WHERE length(log) > 0")}
    assert whole == latest  # and nothing else
    assert keep.prune() == 0  # a second pass finds nothing more
    db.close()


def test_a_reduced_games_own_output_goes_with_its_record(played: Path, tmp_path: Path) -> None:
    # a seat's own output (its author's, ruling 145) was kept for every game retention reduced: the
    # disk held every old game's prints, and an author's page showed output for a game with no record
    folder = tmp_path / "cup"
    folder.mkdir()
    (folder / "contest.db").write_bytes((played / "contest.db").read_bytes())
    db = store.open_db(folder)
    keys = [k for (k,) in db.execute("SELECT key FROM game_order ORDER BY seq")]
    with store.writing(db):
        db.executemany("INSERT INTO outputs VALUES (?, 0, ?)", [(k, b"debug line") for k in keys])
    reduced = retention.Retention(db, folder, keep=50).prune()
    whole = {k for (k,) in db.execute("SELECT key FROM games WHERE length(log) > 0")}
    with_output = {k for (k,) in db.execute("SELECT game FROM outputs")}
    assert reduced > 1000 and with_output == whole  # kept with each whole record, gone with each reduced one
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    db.close()


def seats_of(db: sqlite3.Connection, key: str) -> set[int]:
    return {int(s) for (s,) in db.execute("SELECT submission FROM seats WHERE game = ?", (key,))}


def test_reduced_games_give_their_pages_back_to_the_disk(played: Path, tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    folder.mkdir()
    (folder / "contest.db").write_bytes((played / "contest.db").read_bytes())
    db = store.open_db(folder)
    assert int(db.execute("PRAGMA auto_vacuum").fetchone()[0]) == 2  # a new contest: incremental
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    full = retention.folder_bytes(folder)
    retention.Retention(db, folder, keep=20).prune()
    retention.shrink(db)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    small = retention.folder_bytes(folder)
    # 1,200 games of about 3 KB kept whole; reduced, a few hundred bytes each. Emptying the records
    # in place (an UPDATE) would have freed about a twentieth of the pages.
    assert small < full / 3, (full, small)
    assert retention.recompute(db) == stored_ratings(db)
    db.close()


def test_an_older_database_is_converted_to_give_pages_back(played: Path, tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    folder.mkdir()
    (folder / "contest.db").write_bytes((played / "contest.db").read_bytes())
    raw = sqlite3.connect(folder / "contest.db", isolation_level=None)
    raw.execute("PRAGMA auto_vacuum = NONE")
    raw.execute("VACUUM")  # as a contest made by an older arena
    raw.close()
    db = store.open_db(folder)
    assert int(db.execute("PRAGMA auto_vacuum").fetchone()[0]) == 0
    ratings = stored_ratings(db)
    assert retention.convert(db) and not retention.convert(db)
    assert int(db.execute("PRAGMA auto_vacuum").fetchone()[0]) == 2
    assert retention.recompute(db) == ratings  # VACUUM kept the order of the games
    db.close()


def test_a_reduced_game_shows_its_result(played: Path, tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    folder.mkdir()
    (folder / "contest.db").write_bytes((played / "contest.db").read_bytes())
    db = store.open_db(folder)
    retention.Retention(db, folder, keep=5).prune()
    key = db.execute("SELECT key FROM games WHERE length(log) = 0 LIMIT 1").fetchone()[0]
    whole = db.execute("SELECT key FROM games WHERE length(log) > 0 LIMIT 1").fetchone()[0]
    db.close()
    with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
        page = client.get(f"/games/{key}", headers={"Accept": "text/html"})
        assert page.status_code == 200 and "Only this game's result is kept" in page.text
        assert len(re.findall(r'<tr><td class="n">\d</td>', page.text)) == len(played_seats(folder, key))
        assert "viewer" in client.get(f"/games/{whole}").text.lower()
        assert client.get("/games/b999999-r0", headers={"Accept": "text/html"}).status_code == 404


def played_seats(folder: Path, key: str) -> list[int]:
    with sqlite3.connect(folder / "contest.db") as db:
        return [int(s) for (s,) in db.execute("SELECT submission FROM seats WHERE game = ?", (key,))]


def test_sizes_are_read_and_shown() -> None:
    assert retention.parse_size("50G") == 50 * 10**9
    assert retention.parse_size("800mb") == 800 * 10**6
    assert retention.parse_size("1.5GiB") == int(1.5 * 2**30)
    assert retention.parse_size("4000000") == 4_000_000
    for bad in ("", "lots", "-5G", "1.2.3M", "5X", "0", ".", "1e9", "nan"):
        assert retention.parse_size(bad) is None, bad
    assert [retention.human(n) for n in (512, 3300, 122_000_000, 1.5e9)] == ["512 B", "3.3 KB", "122 MB", "1.5 GB"]


def test_a_bad_disk_budget_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    arena("contest", "init", str(folder))
    for value, said in (("lots", "not a size"), ("2M", "at least 3M"), ("-5G", "not a size")):
        done = arena("serve", str(folder), f"--disk-budget={value}")
        assert done.returncode == 2 and said in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    for option, value in (("--pace", "-1"), ("--pace", "nan"), ("--ladder-cpu", "0"), ("--keep-games", "0")):
        done = arena("serve", str(folder), f"{option}={value}")
        assert done.returncode == 2 and option in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr


@pytest.mark.long
@pytest.mark.timeout(900)
def test_a_served_ladder_stays_within_its_disk_budget_and_keeps_every_result(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    token_of(arena("contest", "init", str(folder)).stdout.splitlines()[-1])
    tokens = [token_of(arena("contest", "invite", str(folder), n).stdout) for n in ("ann", "bob")]
    # No budget yet: the ladder plays, keeps each version's latest 200 games whole, reduces the rest.
    server = Server(folder, "--keep-games", "200")
    server.start()
    try:
        for (name, base), token in zip((("annbot", "greedy"), ("bobbot", "random")), tokens, strict=True):
            done = arena("submit", str(bot_file(tmp_path, name, base)), "--server", server.url, "--token", token)
            assert done.returncode == 0, done.stderr
        wait_for(lambda: count(folder) >= 1000, "the ladder to play 1000 games", 600)
    finally:
        server.stop()
    assert count(folder, "length(log) = 0") > 100  # reduced already
    # Served again with a budget a little above what the folder holds (its WAL gone with the server,
    # the free pages inside the database given back when the ladder starts): the ladder plays until
    # the folder is its reserve short of the budget, and stops there, saying so.
    db = store.open_db(folder)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    free = int(db.execute("PRAGMA freelist_count").fetchone()[0]) * 4096
    db.close()
    budget = max(3_000_000, retention.folder_bytes(folder) - free + retention.RESERVE + 100_000)
    snapshot = read_only(folder, results)
    sizes: list[int] = []
    done_sampling = threading.Event()

    def sample() -> None:
        while not done_sampling.is_set():
            sizes.append(retention.folder_bytes(folder))
            time.sleep(0.05)

    server = Server(folder, "--keep-games", "200", "--disk-budget", str(budget))
    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        server.start()
        wait_for(lambda: ladder_state(folder) == "full", "the ladder to stop at its budget", 600)
        stopped_at = count(folder)
        time.sleep(3)
        assert count(folder) == stopped_at  # stopped: no game more
    finally:
        done_sampling.set()
        sampler.join()
        err = server.stop()
    assert max(sizes) <= budget, (max(sizes), budget)
    assert max(sizes) > budget - retention.RESERVE - 100_000  # it did fill the room it had
    assert re.search(r"arena: warning: ladder: stopped at the disk budget \(.*\): the contest folder holds", err), err
    db = store.open_db(folder)
    try:
        now = results(db)
        assert len(now) > len(snapshot)
        assert {k: now[k] for k in snapshot} == snapshot  # every result stored before is kept as it was
        assert retention.recompute(db) == stored_ratings(db)  # the ratings are those of the kept results
        seats = int(db.execute("SELECT COUNT(*) FROM seats").fetchone()[0])
        assert sum(games for (_, _, games) in stored_ratings(db).values()) == seats
    finally:
        db.close()


def read_only(folder: Path, fn: Any) -> Any:
    db = sqlite3.connect(f"file:{folder / 'contest.db'}?mode=ro", uri=True)
    try:
        return fn(db)
    finally:
        db.close()


def count(folder: Path, where: str = "1") -> int:
    return int(read_only(folder, lambda db: db.execute(f"SELECT COUNT(*) FROM games WHERE {where}").fetchone()[0]))


def ladder_state(folder: Path) -> str:
    row = read_only(folder, lambda db: db.execute("SELECT value FROM contest WHERE key = 'ladder_state'").fetchone())
    return str(json.loads(row[0])["state"]) if row else ""


def test_folder_bytes_counts_every_file_and_follows_no_link(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"x" * 1000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"y" * 500)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.write_bytes(b"z" * 10_000)
    os.symlink(outside, tmp_path / "link")
    assert retention.folder_bytes(tmp_path) == 1500
