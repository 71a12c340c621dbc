"""The server's routes in-process (Starlette's TestClient, no workers): R10 on the game and bot pages,
the desk's diff, forged sessions, malformed requests as JSON 4xx, and hostile contest folders."""

from __future__ import annotations

import os
import random
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.server import arena

from arena.server.contest.checks import prepare_view
from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.ladder.matchmaker import LadderPlayer
from arena.server.store import database as store

with warnings.catch_warnings():  # it warns that it will move to another HTTP client; the one installed works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ANN = '''"""Prints its thoughts; crashes on its fourth move."""
class Bot:
    name = "annbot"
    def __init__(self):
        self.moves = 0
    def move(self, turn):
        self.moves += 1
        print("secret-thought")
        if self.moves == 4:
            raise ValueError("ann-secret-detail")
        if turn.can_put(turn.puttable()[0] if turn.puttable() else None):
            pass
        while not turn.can_finish():
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''
BEN = (Path(__file__).resolve().parents[2] / "bots" / "greedy.py").read_text().replace('"greedy"', '"benbot"')


def login(client: TestClient, token: str) -> None:
    page = client.get("/login").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf
    answer = client.post("/login", data={"token": token, "csrf": csrf.group(1)}, follow_redirects=False)
    assert answer.status_code == 303


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("site") / "cup"
    organiser = store.init_contest(folder, "Cup")
    db = store.open_db(folder)
    tokens = {"ann": store.invite(db, "ann"), "ben": store.invite(db, "ben"), "organiser": organiser}
    app = create_app(ServerSettings(folder, workers=False))
    with TestClient(app) as client:
        for who, source in (("ann", ANN), ("ben", BEN)):
            answer = client.post(
                "/api/submissions", content=source.encode(), headers={"Authorization": f"Bearer {tokens[who]}"}
            )
            assert answer.status_code == 202, answer.text
        for sid in (1, 2):  # checked elsewhere (tests/server/test_server.py): here only the views matter
            store.finish_check(db, sid, {"clean": True}, None)
        player = LadderPlayer(db)
        try:
            while store.games_count(db) < 4:
                player.play_block(random.Random(store.games_count(db)))
        finally:
            player.close()
        key = db.execute("SELECT game FROM seats WHERE submission = 1 ORDER BY game LIMIT 1").fetchone()[0]
        yield {"folder": folder, "tokens": tokens, "app": app, "key": key, "db": db}
    db.close()


def test_game_and_bot_pages_show_each_reader_what_r10_allows(site: dict[str, Any]) -> None:
    key, tokens = site["key"], site["tokens"]
    seen = {}
    for who in ("public", "ben", "ann", "organiser"):
        with TestClient(site["app"]) as client:
            if who != "public":
                login(client, tokens[who])
            game = client.get(f"/games/{key}")
            bot = client.get("/bots/annbot")
            assert game.status_code == 200 and bot.status_code == 200
            seen[who] = (game.text, bot.text)
    for who in ("public", "ben"):
        assert "secret-thought" not in seen[who][0] and "ann-secret-detail" not in seen[who][0] + seen[who][1]
    for who in ("ann", "organiser"):
        assert "secret-thought" in seen[who][0] and "ann-secret-detail" in seen[who][0] + seen[who][1]
    assert '<span class="bad fault">exception</span>' in seen["public"][1]  # who faulted and how, not the detail


def test_the_desk_shows_the_diff_against_the_previous_version(site: dict[str, Any]) -> None:
    tokens = site["tokens"]
    with TestClient(site["app"]) as client:
        changed = BEN.replace("def move(self, turn):", "def move(self, turn):  # version two")
        answer = client.post(
            "/api/submissions", content=changed.encode(), headers={"Authorization": f"Bearer {tokens['ben']}"}
        )
        sid = answer.json()["id"]
        assert client.get(f"/desk/{sid}").status_code == 401
        login(client, tokens["organiser"])
        page = client.get(f"/desk/{sid}").text  # before the check worker made its view: the file, plain
        assert "The diff is being prepared" in page and "# version two" in page and 'class="line add"' not in page
        prepare_view(site["db"], sid)  # what the check worker does after the check
        page = client.get(f"/desk/{sid}").text
        assert re.search(r'Changes since <a href="/desk/\d+">v1</a>', page)
        assert 'class="line add"' in page and "# version two" in page


def test_a_forged_or_tampered_session_signs_nobody_in(site: dict[str, Any]) -> None:
    with TestClient(site["app"]) as client:
        login(client, site["tokens"]["organiser"])
        assert client.get("/desk").status_code == 200
        cookie = client.cookies.get("arena_session")
        assert cookie
        client.cookies.clear()
        payload, _, signature = cookie.partition(".")
        other = payload[:-2] + ("BB" if payload.endswith("AA") else "AA")  # a changed payload, never the same
        for forged in (payload + ".", other + "." + signature, "eyJ3aG8iOlsib3JnYW5pc2VyIiwwXX0=.x.y"):
            client.cookies.set("arena_session", forged)
            assert client.get("/desk").status_code == 401


def test_malformed_requests_get_a_json_4xx(site: dict[str, Any]) -> None:
    ann = {"Authorization": f"Bearer {site['tokens']['ann']}"}
    with TestClient(site["app"], raise_server_exceptions=False) as client:
        cases = [
            client.post("/api/submissions", files={"other": ("x.py", b"x")}, headers=ann),
            client.post("/api/submissions", content=b"", headers=ann),
            client.post("/api/submissions?name=1bad.py", content=b"x = 1\n", headers=ann),
            client.post("/api/submissions", content=b'class Bot:\n    name = "<b>x</b>"\n', headers=ann),
            client.post("/api/bots/annbot/active", content=b"{not json", headers=ann),
            client.post("/api/bots/annbot/active", content=b'{"submission": true}', headers=ann),
            client.post("/api/bots/benbot/active", content=b'{"submission": 2}', headers=ann),
            client.post("/api/register", content=b'{"name": "eve"}'),
            client.get("/api/submissions"),
            client.delete("/api/leaderboard"),
            client.post("/upload", content=b"x"),
            client.get("/final/1/"),  # nothing published yet
            client.get("/final/2/"),  # no round two
            client.get("/final/3/"),
            client.get("/final/1/%2e%2e/%2e%2e/contest.db"),
            client.get("/final/%2e%2e/contest.db"),
            client.get("/final/../contest.db"),
            client.post(
                "/login", content=b"\xff\xfe" * 10, headers={"Content-Type": "multipart/form-data; boundary=x"}
            ),
        ]
        for answer in cases:
            assert 400 <= answer.status_code < 500, (answer.request.url, answer.status_code, answer.text)
            assert set(answer.json()) == {"error"} and "Traceback" not in answer.text
        # a non-UTF-8 upload is stored and left to its check (which reports it)
        odd = client.post("/api/submissions?name=odd.py", content=b"\xff\xfe not text", headers=ann)
        assert odd.status_code == 202


def test_a_hostile_contest_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    link = tmp_path / "linked"
    link.mkdir()
    (tmp_path / "elsewhere.db").write_bytes(b"")
    os.symlink(tmp_path / "elsewhere.db", link / "contest.db")
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "contest.db").write_bytes(b"SQLite format 3\0" + b"\xff" * 200)
    other = tmp_path / "other"
    other.mkdir()
    import sqlite3

    sqlite3.connect(other / "contest.db").execute("CREATE TABLE contest (key, value)").connection.commit()
    runs = [("serve", str(folder), "--port", "1") for folder in (link, junk, other, tmp_path / "missing")]
    for argv in [*runs, ("contest", "invite", str(link), "eve")]:
        done = arena(*argv, timeout=60)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (argv, done.stderr)
        assert "Traceback" not in done.stderr
    assert (tmp_path / "elsewhere.db").read_bytes() == b""
    made = arena("contest", "init", str(link))
    assert made.returncode == 2 and "exists" in made.stderr


def test_a_poison_upload_cannot_stop_the_check_queue(tmp_path: Path) -> None:
    # An upload whose check kills its worker every time (the worker dies, its claim goes back in the
    # queue) is failed after a few tries, and the uploads behind it are checked.
    store.init_contest(tmp_path / "c", "Cup")
    db = store.open_db(tmp_path / "c")
    author = int(store.invite(db, "ann").split(".")[0][1:])
    poison = store.add_submission(db, author, "poison", b"x = 1\n")
    after = store.add_submission(db, author, "after", b"x = 2\n")
    for _ in range(store.MAX_ATTEMPTS):
        row = store.claim_check(db, 4242)
        assert row is not None and row["id"] == poison
        assert store.requeue(db, 4242) == 1  # the supervisor saw worker 4242 die
    row = store.claim_check(db, 4243)
    assert row is not None and row["id"] == after
    failed = store.submission(db, poison)
    assert failed is not None and failed["status"] == "failed" and "died 3 times" in failed["error"]
    db.close()


def test_live_leaderboard_connections_are_bounded(site: dict[str, Any]) -> None:
    from starlette.websockets import WebSocketDisconnect

    app = create_app(ServerSettings(site["folder"], workers=False, max_live=1))
    with TestClient(app) as client, client.websocket_connect("/ws/leaderboard") as first:
        assert first.receive_json()["contest"] == "Cup"
        with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws/leaderboard") as second:
            second.receive_json()
        assert refused.value.code == 1013


def test_token_guessing_is_slowed_to_429(site: dict[str, Any]) -> None:
    from arena.server.http.auth import FAILURES_PER_MINUTE

    app = create_app(ServerSettings(site["folder"], workers=False))
    with TestClient(app) as client:
        seen = [
            client.get("/api/submissions/1", headers={"Authorization": f"Bearer a1.guess{i}"}).status_code
            for i in range(FAILURES_PER_MINUTE + 2)
        ]
        assert seen[:FAILURES_PER_MINUTE] == [401] * FAILURES_PER_MINUTE and seen[-1] == 429
        # the right token from that address waits too: guessing gains nothing by mixing in a good one
        good = {"Authorization": f"Bearer {site['tokens']['ann']}"}
        assert client.get("/api/submissions/1", headers=good).status_code == 429
