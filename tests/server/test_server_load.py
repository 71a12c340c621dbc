"""What keeps the server fast under load (issue 21, item 8): the shared leaderboard (one query per
change of the database, not one per reader), the ladder's streams (one process per version and
rotation slot across blocks, never one deal twice). The benchmark itself (benchmarks/server.py)
takes about 20 s at its smallest, so it is not in the suite."""

from __future__ import annotations

import random
from pathlib import Path

from support.server import ROOT

from arena.game.seeds import GameSeeds
from arena.seats.seating import Chair
from arena.server.contest import rounds
from arena.server.ladder.board import Board
from arena.server.ladder.matchmaker import LadderPlayer
from arena.server.store import database as store

GREEDY = (ROOT / "bots" / "greedy.py").read_text()
RANDOM = (ROOT / "bots" / "random.py").read_text()


def contest(folder: Path, bots: dict[str, str]) -> None:
    store.init_contest(folder, "Cup")
    db = store.open_db(folder)
    try:
        author = int(store.invite(db, "ann").split(".")[0][1:])
        for name, source in bots.items():
            sid = store.add_submission(db, author, name, source.encode())
            store.finish_check(db, sid, {"clean": True}, None)
    finally:
        db.close()


def test_the_board_is_computed_once_per_change_and_sees_every_change(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    contest(folder, {"gbot": GREEDY.replace('"greedy"', '"gbot"'), "rbot": RANDOM.replace('"random"', '"rbot"')})
    board = Board(folder, fresh=0.0)  # no grace period: every read looks at the database's version
    try:
        first = board.get()
        assert [b["bot"] for b in first["bots"]] == ["gbot", "rbot"] and first["games"] == 0
        for _ in range(20):
            assert board.get() is first  # nothing changed: no query
        assert board.computed == 1
        db = store.open_db(folder)  # another connection writes (as the ladder's worker does)
        try:
            player = LadderPlayer(db)
            try:
                player.play_block(random.Random(1))
            finally:
                player.close()
            games = store.games_count(db)
            store.set_setting(db, "frozen", "1")
        finally:
            db.close()
        now = board.get()
        assert board.computed == 2 and now["games"] == games > 0 and now["frozen"] is True
    finally:
        board.close()


def test_ladder_streams_serve_one_game_per_block_and_never_one_deal_twice(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    contest(folder, {"gbot": GREEDY.replace('"greedy"', '"gbot"'), "rbot": RANDOM.replace('"random"', '"rbot"')})
    db = store.open_db(folder)
    player = LadderPlayer(db)
    try:
        rng = random.Random(7)
        for _ in range(4):
            assert player.play_block(rng) == 2  # the only table: both bots, two rotations
        streams = dict(player.runner.seating._streams)
        assert set(streams) == {(1, 0), (1, 1), (2, 0), (2, 1)}
        for stream in streams.values():
            assert stream.games == 4 and len(stream.deals) == 4  # one game a block, four deals
            assert stream.processes < stream.games  # the same process served the blocks
        # the attack: a deal this stream has seen (a block played again) is never served by it
        row = {r["id"]: r for r in rounds.entrants(db)[1]}[1]
        seen = next(iter(streams[(1, 0)].deals))
        assert player.runner.block is not None and bytes(row["source"]) == player.runner.block.bots[1][1]
        seat = player.runner.seating._seat(Chair(1, "gbot#v1"), 0, GameSeeds(seen, 5), True)
        assert getattr(seat, "stream", None) is not streams[(1, 0)]
        seat.close()
        assert store.games_count(db) == 8
    finally:
        player.close()
        db.close()
    assert not player.runner.seating._streams


def test_a_bot_page_reads_only_its_latest_games(tmp_path: Path) -> None:
    from arena.server.routes.dashboard import HISTORY, PAGE, GameFilter
    from arena.server.routes.pages import bot_data

    folder = tmp_path / "cup"
    contest(folder, {"gbot": GREEDY.replace('"greedy"', '"gbot"'), "rbot": RANDOM.replace('"random"', '"rbot"')})
    db = store.open_db(folder)
    try:
        block = store.new_block(db, [1, 2])
        total = HISTORY + 40
        for i in range(total):  # an old fault, then games without, then a fresh fault
            faults = [(0, "exception", f"detail {i}", 1)] if i in (0, total - 1) else []
            assert store.record_game(db, f"g{i}", block, 0, [1, 2], [1, 2], [0, 30], faults, [])
        data = bot_data(db, "gbot", None)
        assert data is not None and len(data["history"]["points"]) == HISTORY  # the chart: its latest games
        assert data["history"]["games"] == total
        games = data["games"]  # a page of them, newest first, and how many pages there are
        assert [g["key"] for g in games["games"]][:2] == [f"g{total - 1}", f"g{total - 2}"]
        assert len(games["games"]) == PAGE and games["pages"] == -(-total // PAGE)
        faulty = bot_data(db, "gbot", None, GameFilter(fault="any"))
        assert faulty is not None and [g["key"] for g in faulty["games"]["games"]] == [f"g{total - 1}", "g0"]
        assert "detail 0" not in str(faulty["games"])  # the public sees no fault detail (R10)
        own = bot_data(db, "gbot", ("organiser", 0), GameFilter(fault="any"))
        assert own is not None and own["games"]["games"][-1]["mine"][0]["details"][0]["detail"] == "detail 0"
    finally:
        db.close()


def test_public_pages_are_shared_but_never_a_signed_in_view(tmp_path: Path) -> None:
    import re
    import time
    import warnings

    from arena.server.http.app import create_app
    from arena.server.http.settings import ServerSettings
    from arena.server.ladder.board import FRESH_SECONDS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    folder = tmp_path / "cup"
    contest(folder, {"gbot": GREEDY.replace('"greedy"', '"gbot"'), "rbot": RANDOM.replace('"random"', '"rbot"')})
    organiser = store.init_contest(tmp_path / "other", "x")  # a second contest: its own pages
    db = store.open_db(folder)
    try:
        block = store.new_block(db, [1, 2])
        store.record_game(db, "g0", block, 0, [1, 2], [1, 2], [0, 30], [(0, "exception", "secret-detail", 1)], [])
        app = create_app(ServerSettings(folder, workers=False))
        with TestClient(app) as public:
            first = public.get("/bots/gbot").text
            assert "g0" in first and "secret-detail" not in first
            store.record_game(db, "g1", block, 1, [2, 1], [1, 2], [0, 30], [], [])
            time.sleep(FRESH_SECONDS)
            assert "g1" in public.get("/bots/gbot").text  # a new game shows within FRESH_SECONDS
            assert public.get("/games/g0").status_code == 404  # an empty record: no page, and nothing kept
        hashed = store.token_hash(organiser)
        store.set_setting(db, "organiser_hash", hashed)  # this contest's organiser now signs in with that token
        with TestClient(app) as org:
            page = org.get("/login").text
            token = re.search(r'name="csrf" value="([^"]+)"', page)
            assert token and org.post("/login", data={"token": organiser, "csrf": token.group(1)}).status_code == 200
            assert "secret-detail" in org.get("/bots/gbot").text  # the organiser's own view, not the shared one
        with TestClient(app) as public:
            assert "secret-detail" not in public.get("/bots/gbot").text  # and the organiser's view was not kept
    finally:
        db.close()
