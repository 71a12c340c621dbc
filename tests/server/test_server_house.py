"""House bots (issue 29, item 2): round one against the organiser's own AI. A contest made with house
bots and one author's upload has games for that upload at once, on a real server; house bots are
rated like every bot, marked in the API and on every page, never an author's, never play without an
author's bot, never picked for round two's field (where they play beside it); the organiser
changes the set while the server runs."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
from support.server import Server, arena, bot_file, token_of, wait_for

from arena.game.rules import Rules
from arena.server.contest import house, rounds
from arena.server.ladder.matchmaker import LadderEntrant, LadderPlayer, pick_table
from arena.server.store import database as store

#: The issue's minute: an upload's check and first games take seconds; this bounds the wait.
MINUTE = 60.0


def board(server: Server) -> dict[str, dict[str, object]]:
    status, data = server.get("/api/leaderboard")
    assert status == 200
    return {b["bot"]: b for b in data["bots"]}


@pytest.mark.long
def test_one_authors_upload_plays_the_house_bots_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    made = arena("contest", "init", str(folder), "--name", "House Cup")  # the default house: random, heuristic
    assert (
        made.returncode == 0 and "house bots (the organiser's own AI, on the ladder): random, heuristic" in made.stdout
    )
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    assert arena("contest", "invite", str(folder), "House").returncode == 2  # no author passes for the house
    server = Server(folder)
    server.start()
    try:
        assert board(server) and all(b["games"] == 0 for b in board(server).values())  # never alone
        sent = arena("submit", str(bot_file(tmp_path, "annbot")), "--server", server.url, env={"ARENA_TOKEN": ann})
        assert sent.returncode == 0, sent.stderr
        wait_for(lambda: board(server)["annbot"]["games"] > 0, "games for the one author's upload", MINUTE)
        bots = board(server)
        assert {b: (v["house"], v["author"]) for b, v in bots.items()} == {
            "annbot": (False, "ann"),
            "random": (True, None),
            "heuristic": (True, None),
        }
        page = server.get("/")[1]
        assert page.count('data-house="1"') == 2 and "house bot" in page and "(house)" not in page
        assert "a house bot: the organiser's own AI" in server.get("/bots/random")[1]
        # an author's bot cannot take a house bot's name
        status, data = server.request(
            "POST",
            "/api/submissions?name=random.py",
            bot_file(tmp_path, "random").read_bytes(),
            {"Authorization": f"Bearer {ann}"},
        )
        assert status == 409 and "belongs to another author" in data["error"]
        # the organiser changes the house while the server runs: a bot file joins (checked, sandboxed), one leaves
        mine = bot_file(tmp_path, "orgbot", "heuristic")
        changed = arena("contest", "house", str(folder), "--add", str(mine), "--remove", "random")
        assert changed.returncode == 0 and "orgbot: " in changed.stdout and "random: off" in changed.stdout, changed
        wait_for(lambda: "orgbot" in board(server) and "random" not in board(server), "the house's change", MINUTE)
        assert board(server)["orgbot"]["house"] is True and board(server)["orgbot"]["author"] is None
        for bad, why in (
            ("nosuch", "--add 'nosuch': no registered bot of that name"),
            ("annbot.py", "belongs to ann's bot"),
        ):
            if bad.endswith(".py"):
                bot_file(tmp_path, "annbot")
                bad = str(tmp_path / bad)
            done = arena("contest", "house", str(folder), "--add", bad)
            assert done.returncode == 2 and why in done.stderr and done.stderr.count("\n") == 1, done.stderr
    finally:
        server.stop()
    # every ladder game seated the author's bot: house bots never play only each other
    with sqlite3.connect(folder / "contest.db") as db:
        annbot = db.execute("SELECT id FROM submissions WHERE bot = 'annbot'").fetchone()[0]
        seatings = [json.loads(r[0]) for r in db.execute("SELECT seating FROM games")]
    assert seatings and all(annbot in s for s in seatings)


def test_the_focus_of_a_table_is_an_authors_bot() -> None:
    rng = random.Random(3)
    mixed = [LadderEntrant(1, "random", 25.0, 8.3, 0, True), LadderEntrant(2, "heuristic", 25.0, 8.3, 0, True)]
    assert pick_table(mixed, rng) == []  # house bots alone: no table
    mixed.append(LadderEntrant(3, "annbot", 25.0, 1.0, 500))  # settled, yet the only possible focus
    tables = [pick_table(mixed, rng) for _ in range(200)]
    assert all(3 in t for t in tables) and {len(t) for t in tables} == {2, 3}


def test_house_bots_sit_beside_round_twos_field_and_are_never_picked_for_it(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    store.init_contest(folder, "Cup")
    db = store.open_db(folder)
    house.add(db, ["random", "heuristic"])
    author = int(store.invite(db, "ann").split(".")[0][1:])
    sid = store.add_submission(db, author, "annbot", bot_file(tmp_path, "annbot").read_bytes())
    store.finish_check(db, sid, {"clean": True}, None)
    store.review(db, sid, "approved", "")
    ids = {r[1]: int(r[0]) for r in db.execute("SELECT id, bot FROM submissions")}
    for _ in range(4):  # the house bots rated above the author's bot in round one
        order = [ids["heuristic"], ids["random"], ids["annbot"]]
        block = store.new_block(db, order, 1)
        assert store.record_game(db, f"b{block}-r0", block, 0, order, [1, 2, 3], [0, 0, 0], [], [])
    assert [b["bot"] for b in rounds.leaderboard(db)["bots"]] == ["heuristic", "random", "annbot"]
    with pytest.raises(store.ContestError, match=r"has rated only 1 approved author's bot \(annbot\)"):
        rounds.open_round(db, folder, 2, Rules(), "contest", [], no_final=True)
    rnd, picks = rounds.open_round(db, folder, 1, Rules(limit=100), "contest", ["limit=100"], no_final=True)
    assert [p.bot for p in picks] == ["annbot"] and list(rnd.field) == [ids["annbot"]]
    bob = int(store.invite(db, "bob").split(".")[0][1:])
    # the attack: an upload named like a registered bot (greedy, not in the house) to be run as arena's own,
    # in the ladder's process; it is an author's bot, played from its stored bytes in the sandbox
    new = store.add_submission(db, bob, "greedy", bot_file(tmp_path, "greedy", "heuristic").read_bytes())
    store.finish_check(db, new, {"clean": True}, None)
    board = {b["bot"]: b for b in rounds.leaderboard(db)["bots"]}
    assert set(board) == {"annbot", "greedy", "random", "heuristic"} and board["random"]["house"]
    assert not board["greedy"]["house"] and board["greedy"]["author"] == "bob"
    assert not board["random"]["field"] and board["annbot"]["field"]
    player = LadderPlayer(db)
    try:
        for seed in range(4):
            block = player.next_block(random.Random(seed))
            assert block is not None and new in block.table  # the gauntlet: the new bot against field and house
            assert set(block.table) - {new} <= {ids["annbot"], ids["random"], ids["heuristic"]}
            assert block.registered == frozenset(s for s in block.table if s in (ids["random"], ids["heuristic"]))
    finally:
        player.close()
    db.close()
