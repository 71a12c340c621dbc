"""Builds on the contest server (issue 27, item 3): a bot program's build runs once per uploaded
version, in its own queue with a per-author share, off the check worker's, the ladder's and the
tables' loops; its output is cached by sha256 in the contest folder and read back checked; the
check, the ladder and the tables take it from there and never build.

Each test here fails on the code before: the check worker built (another author's upload waited
behind the build), the ladder built in its only loop (every game stopped meanwhile), and again on
every eviction; there was no queue, no cache and no "building".
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.builds import BuildWatch, build_shells, marker
from support.server import ROOT, Server, arena, token_of, wait_for

from arena.authoring.check import CheckSettings
from arena.sandbox.programs.buildcache import BuildCache, build_key, forbid_builds
from arena.server.contest import building, checks
from arena.server.contest.uploads import stored_bot
from arena.server.ladder.matchmaker import LadderPlayer
from arena.server.routes.tables import choose_bots
from arena.server.store import builds
from arena.server.store import database as store
from arena.server.tables.hub import TableError
from arena.trust.botfolder import bundle
from arena.trust.botsource import read_bot_file

builds_as_root = pytest.mark.skipif(os.geteuid() != 0, reason="builds run sandboxed only as root")
GREEDY = (ROOT / "bots" / "greedy.py").read_text()


def python_bot(name: str) -> bytes:
    return GREEDY.replace('name = "greedy"', f'name = "{name}"').encode()


def program(name: str, build: str) -> bytes:
    """A bot program's stored bundle: the python-stdio kit's files under ``name``, with ``build``."""
    files = dict(read_bot_file(ROOT / "examples" / "kits" / "python-stdio").files)
    toml = files["bot.toml"].decode().replace('name = "stdio-py"', f'name = "{name}"') + f"build = {build!r}\n"
    return bundle("program", tuple(sorted({**files, "bot.toml": toml.encode()}.items()))).encode()


@pytest.fixture
def cup(tmp_path: Path) -> Iterator[tuple[sqlite3.Connection, list[int]]]:
    """A contest's database and three authors' ids."""
    store.init_contest(tmp_path / "cup", "Cup")
    db = store.open_db(tmp_path / "cup")
    try:
        yield db, [int(store.invite(db, who).split(".")[0][1:]) for who in ("ann", "ben", "cat")]
    finally:
        db.close()


def test_one_authors_ten_builds_do_not_delay_another_authors_one(cup: tuple[sqlite3.Connection, list[int]]) -> None:
    db, (ann, ben, _) = cup
    flood = [store.add_submission(db, ann, f"ann{i}", program(f"ann{i}", f"make {i}")) for i in range(10)]
    late = store.add_submission(db, ben, "ben0", program("ben0", "make"))
    first, second = builds.claim(db, 101), builds.claim(db, 102)
    assert first is not None and second is not None
    assert (first["submission"], second["submission"]) == (flood[0], late)  # ben's does not wait for ann's ten
    assert builds.claim(db, 103) is None  # one build of an author's at a time: the other nine wait their turn
    builds.finish(db, first["key"], "0" * 64, None)
    third = builds.claim(db, 101)
    assert third is not None and third["submission"] == flood[1]
    # uploads of the same files and command share one build (another bot's: the same bot's are one version)
    again = store.add_submission(db, ann, "ann1copy", program("ann1", "make 1"))
    assert db.execute("SELECT COUNT(*) FROM builds").fetchone()[0] == 11
    assert builds.of(db, again)["key"] == builds.of(db, flood[1])["key"]  # type: ignore[index]


def test_a_check_waits_for_its_build_without_holding_back_another_authors(
    cup: tuple[sqlite3.Connection, list[int]],
) -> None:
    db, (ann, ben, _) = cup
    waiting = store.add_submission(db, ann, "annprog", program("annprog", "make"))
    plain = store.add_submission(db, ben, "benbot", python_bot("benbot"))
    assert store.submission(db, waiting)["shown"] == "building"  # type: ignore[index]
    assert store.submission(db, plain)["shown"] == "queued"  # type: ignore[index]
    claimed = store.claim_check(db, 7)
    assert claimed is not None and claimed["id"] == plain  # the older upload's build is not done: skipped
    assert store.claim_check(db, 8) is None
    build = builds.claim(db, 9)
    assert build is not None and store.submission(db, waiting)["shown"] == "building"  # type: ignore[index]
    builds.finish(db, build["key"], "0" * 64, None)
    assert store.submission(db, waiting)["shown"] == "queued"  # type: ignore[index]
    claimed = store.claim_check(db, 8)
    assert claimed is not None and claimed["id"] == waiting


def test_an_older_databases_programs_are_looked_at_and_their_builds_queued(
    cup: tuple[sqlite3.Connection, list[int]],
) -> None:
    # an upload stored by an arena before the builds queue has no build named (NULL): it is looked
    # at by the workers, its build queued, and meanwhile it is neither checked nor played
    db, (ann, _, _) = cup
    sid = store.add_submission(db, ann, "oldprog", program("oldprog", "make"))
    with store.writing(db):
        db.execute("DELETE FROM builds")
        db.execute("UPDATE submissions SET build = NULL")
    assert store.claim_check(db, 1) is None and builds.unready(db, [sid]) == {sid}
    assert builds.decide_missing(db) == 1
    row = builds.of(db, sid)
    assert row is not None and row["state"] == "queued" and row["author"] == ann


@builds_as_root
def test_the_check_takes_the_build_from_the_cache_and_a_damaged_entry_is_built_again(
    cup: tuple[sqlite3.Connection, list[int]],
) -> None:
    db, (ann, _, _) = cup
    mark = marker()
    sid = store.add_submission(db, ann, "annprog", program("annprog", f"sleep 1; : {mark}; echo made > made.txt"))
    with BuildWatch(mark) as watch:
        assert building.run_queue(db, 11)
        row = builds.of(db, sid)
        assert row is not None and row["state"] == "built"
        entry = builds.cache_folder(db) / "objects" / row["digest"]
        entry.write_bytes(entry.read_bytes().replace(b"made\n", b"evil\n"))  # damaged: never trusted
        with forbid_builds("the check never builds"):
            assert checks.run_queue(db, CheckSettings(games=1), 12)
        assert store.submission(db, sid)["shown"] == "building"  # type: ignore[index]  # queued again, unchecked
        assert building.run_queue(db, 11)
        with forbid_builds("the check never builds"):
            assert checks.run_queue(db, CheckSettings(games=1), 12)
    done = store.submission(db, sid)
    assert done is not None and done["status"] == "clean", done["error"]
    assert watch.builds == 2  # the upload's build, and the rebuild of the damaged entry: none in the check
    assert BuildCache(builds.cache_folder(db)).load(row["key"], builds.of(db, sid)["digest"])["made.txt"] == b"made\n"  # type: ignore[index]


@builds_as_root
def test_a_failed_build_is_one_not_clean_check_with_the_compilers_last_lines_once(
    cup: tuple[sqlite3.Connection, list[int]],
) -> None:
    db, (ann, _, _) = cup
    mark = marker()
    build = f"sleep 1; : {mark}; echo compiling; echo 'bot.cpp:7:3: error: expected ;' >&2; exit 1"
    sid = store.add_submission(db, ann, "annprog", program("annprog", build))
    with BuildWatch(mark) as watch:
        for _ in range(2):  # the second time round, nothing is left to do
            building.run_queue(db, 11)
            checks.run_queue(db, CheckSettings(games=1), 12)
    row = store.submission(db, sid)
    assert row is not None and row["status"] == "failed"
    assert "the build failed (exited with status 1): compiling | bot.cpp:7:3: error: expected ;" in row["error"]
    assert watch.builds == 1 and builds.of(db, sid)["attempts"] == 1  # type: ignore[index]


def test_the_ladder_and_the_tables_skip_a_version_whose_build_is_not_ready(
    cup: tuple[sqlite3.Connection, list[int]],
) -> None:
    db, (ann, ben, _) = cup
    for name in ("ann1", "ann2"):
        store.finish_check(db, store.add_submission(db, ann, name, python_bot(name)), {"clean": True}, None)
    source = program("benprog", "make")
    prog = store.add_submission(db, ben, "benprog", source)
    store.finish_check(db, prog, {"clean": True}, None)  # active, as an older arena could leave it: unbuilt
    rng = random.Random(3)
    ladder = LadderPlayer(db)
    try:
        tables = [block.table for _ in range(30) if (block := ladder.next_block(rng)) is not None]
        assert len(tables) == 30 and all(prog not in t for t in tables)
        with pytest.raises(TableError, match="is being built"):
            choose_bots(db, ["benprog"])
        # built: its files go to the ladder's blocks and the tables, from the cache
        files = {"made": b"by the queue", **dict(stored_bot("benprog", source).files)}
        key = builds.of(db, prog)["key"]  # type: ignore[index]
        assert key == build_key("make", dict(stored_bot("benprog", source).files))
        builds.finish(db, key, BuildCache(builds.cache_folder(db)).save(key, files), None)
        blocks = [b for _ in range(30) if (b := ladder.next_block(rng)) is not None and prog in b.table]
        assert blocks and all(dict(b.built[prog]) == files for b in blocks)
        seats, _ = choose_bots(db, ["benprog"])  # the table opens; the tables worker plays the cached build
        assert seats[0].submission == prog
        assert dict(building.playable(db, prog, "benprog", source).built or ()) == files
    finally:
        ladder.close()
    # a damaged entry: the version waits again (its build queued), and is never played from it
    entry = next((builds.cache_folder(db) / "objects").iterdir())
    entry.write_bytes(entry.read_bytes()[:-1])
    fresh = LadderPlayer(db)
    try:
        found = [b for _ in range(30) if (b := fresh.next_block(rng)) is not None]
        assert all(prog not in b.table for b in found) and builds.of(db, prog)["state"] == "queued"  # type: ignore[index]
    finally:
        fresh.close()


@pytest.mark.long
@builds_as_root
def test_the_ladder_plays_on_while_a_new_version_builds_and_another_authors_upload_is_checked(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "cup"
    arena("contest", "init", str(folder))
    tokens = {who: token_of(arena("contest", "invite", str(folder), who).stdout) for who in ("ann", "ben", "cat")}
    server = Server(folder)
    server.start()

    def upload(who: str, data: bytes, name: str) -> dict[str, object]:
        headers = {"Authorization": f"Bearer {tokens[who]}"}
        status, answer = server.request("POST", f"/api/submissions?name={name}", data, headers)
        assert status == 202, answer
        return dict(answer)

    def view(who: str, sid: object) -> dict[str, object]:
        return dict(server.get(f"/api/submissions/{sid}", tokens[who])[1])

    def games() -> int:  # games recorded, each counted once a seat
        return sum(int(b["games"]) for b in server.get("/api/leaderboard")[1]["bots"])

    try:
        for name in ("ann1", "ann2"):
            upload("ann", python_bot(name), f"{name}.py")
        wait_for(lambda: games() >= 4, "the ladder to play")
        mark = marker()
        prog = upload("ben", program("benprog", f"sleep 20; : {mark}"), "benprog")
        assert prog["status"] == "building"
        wait_for(lambda: build_shells(mark), "the build to start")
        first = set(build_shells(mark))  # the upload's build, running when cat uploads
        plain = upload("cat", python_bot("catbot"), "catbot.py")
        during: dict[int, list[int]] = {}  # each build's pid: the ladder's game count when seen first and last
        cat_clean_while_building = False
        seen_building = False
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            shells = build_shells(mark)
            count = games()
            for pid in shells:
                during.setdefault(pid, [count, count])[1] = count
            seen_building |= bool(shells) and view("ben", prog["id"])["status"] == "building"
            cat_clean_while_building |= bool(first & set(shells)) and view("cat", plain["id"])["status"] == "clean"
            bots = {b["bot"]: b for b in server.get("/api/leaderboard")[1]["bots"]}
            if not shells and int(bots.get("benprog", {}).get("games", 0)) >= 2:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"benprog never played: {view('ben', prog['id'])}")
    finally:
        server.stop()
    assert len(during) == 1, during  # built once: not again by the ladder
    ((first, last),) = during.values()
    assert last - first >= 3, during  # the ladder's games went on being recorded while it built
    assert seen_building and cat_clean_while_building


@pytest.mark.long
@builds_as_root
def test_the_final_takes_its_programs_builds_from_the_cache(cup: tuple[sqlite3.Connection, list[int]]) -> None:
    from arena.server.contest import final, lineup, publish

    db, (ann, ben, _) = cup
    mark = marker()
    plain = store.add_submission(db, ann, "annbot", python_bot("annbot"))
    store.finish_check(db, plain, {"clean": True}, None)
    prog = store.add_submission(db, ben, "benprog", program("benprog", f"sleep 1; : {mark}"))
    with BuildWatch(mark) as watch:
        assert building.run_queue(db, 11)
        assert checks.run_queue(db, CheckSettings(games=1), 12)
        for sid in (plain, prog):
            store.review(db, sid, "approved", "")
        settings = final.FinalSettings(players=(2,), until_separated=False, games=1)
        assert lineup.begin(db, 1, settings, freeze=True)[0] is None
        assert publish.run(db, builds.cache_folder(db).parent, 1, settings), final.state(db)
    assert final.state(db)["state"] == "published", final.state(db)
    assert watch.builds == 1  # the queue's: not the check's, nor the final's tournament's


def test_an_authors_builds_no_version_needs_are_let_go_and_built_again_when_asked_for(
    cup: tuple[sqlite3.Connection, list[int]],
) -> None:
    # every upload's build kept for ever: one author's uploads (10 a minute, 64 MiB each) filled the disk
    db, (ann, _, _) = cup
    cache = BuildCache(builds.cache_folder(db))
    versions = []
    for i in range(7):
        sid = store.add_submission(db, ann, "annprog", program("annprog", f"make v{i}"))
        row = builds.claim(db, 1)
        assert row is not None and row["submission"] == sid
        builds.finish(db, row["key"], cache.save(row["key"], {"bot": f"v{i}".encode()}), None)
        store.finish_check(db, sid, {"clean": True}, None)  # each clean version becomes the active one
        for key, digest in builds.evict(db, ann):
            cache.forget(key, digest)
        versions.append(sid)
    states = [builds.of(db, sid)["state"] for sid in versions]  # type: ignore[index]
    assert states == ["evicted"] * 3 + ["built"] * 4  # the active one and the latest
    assert len(list((builds.cache_folder(db) / "objects").iterdir())) == builds.KEEP_RECENT
    # the author makes an old version active again: it is built again, and waits meanwhile
    store.set_active(db, "annprog", versions[0])
    assert builds.unready(db, [versions[0]]) == {versions[0]}
    with pytest.raises(building.NotReady):
        building.playable(db, versions[0], "annprog", program("annprog", "make v0"))
    assert builds.of(db, versions[0])["state"] == "queued"  # type: ignore[index]
    store.set_active(db, "annprog", versions[1])  # the ladder wakes an evicted entrant's build too
    ladder = LadderPlayer(db)
    try:
        ladder.next_block(random.Random(1))
    finally:
        ladder.close()
    assert builds.of(db, versions[1])["state"] == "queued"  # type: ignore[index]


def test_an_upload_of_a_build_let_go_of_has_it_built_again_and_is_checked(
    cup: tuple[sqlite3.Connection, list[int]],
) -> None:
    db, (ann, _, _) = cup
    cache = BuildCache(builds.cache_folder(db))
    first = store.add_submission(db, ann, "annprog", program("annprog", "make"))
    row = builds.claim(db, 1)
    assert row is not None
    builds.finish(db, row["key"], cache.save(row["key"], {"bot": b"x"}), None)
    store.finish_check(db, first, {"clean": False}, "no")  # failed: no version needs its build
    with store.writing(db):
        db.execute("UPDATE builds SET state = 'evicted', digest = NULL")
    again = store.add_submission(db, ann, "annprog2", program("annprog", "make"))  # the same files, a new bot
    assert builds.of(db, again)["state"] == "queued"  # type: ignore[index]  # not left waiting for ever
