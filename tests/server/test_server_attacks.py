"""The contest server attacked (issue 21, item 7): as an anonymous client, as an author against
other authors and the organiser, with hostile uploads and as a hostile websocket client. One
server started as users start it (`arena contest init`, `invite`, `arena serve`) for the module;
its log must hold no unexpected error at the end (every bad request a JSON 4xx, never a 500).
Each attack is listed in docs/security/attacks.md ("The contest server, attacked")."""

from __future__ import annotations

import http.client
import json
import re
import socket
import sqlite3
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import chromium
from support.server import ROOT, Server, arena, wait_for

from arena.server.contest.checks import prepare_view
from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.store import database as store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

pytestmark = pytest.mark.long
GREEDY = (ROOT / "bots" / "greedy.py").read_text()
#: Script that would run if a page let contestant text in as markup.
XSS = (
    '<img src=x onerror="window.PWNED=1"><script>window.PWNED=2</script>'
    '</textarea></pre>"\'><svg onload="window.PWNED=3">'
)
#: A bot whose printed output, table talk and source carry markup; it plays cleanly.
LOUD = (
    GREEDY.replace("class Bot", "class Quiet")
    + f"""

# {XSS}
class Bot(Quiet):
    name = "loudbot"

    def move(self, turn):
        print({XSS!r})
        turn.say({XSS!r})
        return super().move(turn)
"""
)
#: A bot that faults with markup in the fault's detail.
FAULTY = f"""class Bot:
    name = "faultbot"
    def move(self, turn):
        print({XSS!r})
        raise ValueError({XSS!r})
"""


def greedy(name: str) -> bytes:
    return GREEDY.replace('name = "greedy"', f'name = "{name}"').encode()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("attacks") / "cup"
    organiser = store.init_contest(folder, "Red Cup")  # what `arena contest init` and `invite` do
    db = store.open_db(folder)
    tokens = {who: store.invite(db, who) for who in ("ann", "ben", "cat")}
    db.close()
    server = Server(folder, "--ladder-workers", "0", "--uploads-per-minute", "5")
    server.start()
    try:
        ids = {}
        for who, name, source in (("ann", "annbot", greedy("annbot")), ("ben", "loudbot", LOUD.encode())):
            status, data = server.request("POST", "/api/submissions", source, auth(tokens[who]))
            assert status == 202, data
            ids[name] = data["id"]
        status, data = server.request("POST", "/api/submissions", FAULTY.encode(), auth(tokens["ben"]))
        ids["faultbot"] = data["id"]
        wait_for(
            lambda: all(
                server.get(f"/api/submissions/{i}", organiser)[1]["status"] in ("clean", "failed") for i in ids.values()
            ),
            "the checks",
        )
        yield {"server": server, "folder": folder, "tokens": tokens, "organiser": organiser, "ids": ids}
    finally:
        err = server.stop()
    # the server's log after every attack: no error of the app (a 500), no traceback
    assert "Exception in ASGI application" not in err and "Traceback" not in err, err[-3000:]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def raw_get(server: Server, path: str, headers: dict[str, bytes] | None = None) -> tuple[int, Any]:
    """A request whose path and header bytes are sent as given (latin-1), as no polite client would."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.putrequest("GET", path, skip_accept_encoding=True)
    for key, value in (headers or {}).items():
        conn.putheader(key, value)
    conn.endheaders()
    answer = conn.getresponse()
    body = answer.read()
    conn.close()
    is_json = answer.getheader("content-type", "").startswith("application/json")
    return answer.status, json.loads(body) if is_json else body


def signed_in(client: TestClient | Any, token: str, base: str = "") -> str:
    """Sign ``client`` in with ``token``; returns the session's CSRF token."""
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get(f"{base}/login").text)
    assert csrf
    client.post(f"{base}/login", data={"token": token, "csrf": csrf.group(1)}, follow_redirects=False)
    fresh = re.search(r'name="csrf" value="([^"]+)"', client.get(f"{base}/").text)
    assert fresh
    return fresh.group(1)


def is_json_4xx(status: int, data: Any) -> bool:
    return 400 <= status < 500 and isinstance(data, dict) and set(data) == {"error"}


# -- input: numbers, JSON, heads ---------------------------------------------------------------


def test_odd_numbers_in_ids_rounds_forms_and_tokens_are_a_json_4xx(site: dict[str, Any]) -> None:
    # str.isdigit() takes "²" (int() refuses it: a 500) and "١" (int() reads 1: an alias of id 1);
    # an id past SQLite's 64 bits overflowed its driver (a 500)
    server, ann = site["server"], site["tokens"]["ann"]
    for path in (
        "/api/submissions/%C2%B2",
        "/api/submissions/%D9%A1",
        "/api/submissions/" + "9" * 30,
        "/api/leaderboard?round=%C2%B2",
        "/?round=%C2%B2",
        "/api/leaderboard?round=" + "9" * 25,
    ):
        status, data = raw_get(server, path, {"Authorization": f"Bearer {ann}".encode()})
        assert is_json_4xx(status, data), (path, status, data)
    status, data = raw_get(server, "/api/submissions/1", {"Authorization": b"Bearer a\xb2.x"})  # latin-1 "a²"
    assert status == 401 and is_json_4xx(status, data)
    for sid in (2**70, -1, "1", True, None, 1.0):
        status, data = server.request(
            "POST", "/api/bots/annbot/active", json.dumps({"submission": sid}).encode(), auth(ann)
        )
        assert status == 400 and is_json_4xx(status, data), (sid, status, data)


def test_deeply_nested_json_is_a_400(site: dict[str, Any]) -> None:
    server, ann = site["server"], site["tokens"]["ann"]
    for body in (b"[" * 30000 + b"]" * 30000, b'{"a":' * 10000 + b"1" + b"}" * 10000, b"\xff\xfe{"):
        status, data = server.request("POST", "/api/bots/annbot/active", body, auth(ann))
        assert status == 400 and is_json_4xx(status, data), (status, data)


def test_an_endless_request_head_is_cut_off(site: dict[str, Any]) -> None:
    # uvicorn's default parser kept every header byte: 200 MB in one header held the event loop
    # (every other client) for tens of seconds; now a head past 32 KiB ends the connection
    server = site["server"]
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(b"GET /api/leaderboard HTTP/1.1\r\nHost: x\r\nX-Big: ")
        answer = b""
        try:
            for _ in range(64):  # 4 MiB at most
                s.sendall(b"a" * 65536)
            s.sendall(b"\r\n\r\n")
            answer = s.recv(200)
        except OSError:  # reset while sending: cut off
            pass
    assert not answer.startswith(b"HTTP/1.1 200"), answer
    assert server.get("/api/leaderboard")[0] == 200
    for bad in (b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
            s.sendall(bad)  # what the parser refuses is a JSON 400 too
            got = b""
            while chunk := s.recv(4096):
                got += chunk
        head, _, body = got.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head and set(json.loads(body)) == {"error"}


def test_a_request_sent_a_byte_at_a_time_is_dropped_at_its_deadline() -> None:
    # slowloris: a client that never finished its request head held its connection (a file
    # descriptor) for ever; now each request must arrive whole within its deadline
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route, WebSocketRoute

    from arena.server.http import transport

    class Quick(transport.DeadlineH11):
        seconds = 0.3

    async def hello(request: Any) -> PlainTextResponse:
        return PlainTextResponse("hi")

    async def echo(ws: Any) -> None:
        await ws.accept()
        while True:
            await ws.send_text(await ws.receive_text())

    port = free_port()
    app = Starlette(routes=[Route("/", hello), WebSocketRoute("/ws", echo)])
    limits = {**transport.limits(), "http": Quick}
    config = uvicorn.Config(app, port=port, log_level="warning", lifespan="off", **limits)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, "the server", 30)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and nothing more
            assert slow.recv(100) == b""  # closed by the server (a socket timeout would raise instead)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as fine:  # a whole request is answered
            for _ in range(2):  # and the next one on the same connection
                fine.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                got = b""
                while not got.endswith(b"hi"):
                    got += fine.recv(1000) or b"(closed)"
                    assert b"(closed)" not in got
                assert got.startswith(b"HTTP/1.1 200")
        import asyncio

        import websockets

        async def talk() -> str:  # a websocket outlives the deadline: it is no request in progress
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws") as ws:
                await asyncio.sleep(0.6)
                await ws.send("still here")
                return str(await ws.recv())

        assert asyncio.run(talk()) == "still here"
    finally:
        server.should_exit = True
        thread.join(30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- denial of service: uploads and live sockets ---------------------------------------------------


def test_uploads_sent_at_once_cannot_pass_the_limit_together(site: dict[str, Any]) -> None:
    # the count of an author's uploads was made before any of them was stored: 12 sent at once
    # all passed a limit of 5 a minute; now the count and the insert are one transaction
    server, cat = site["server"], site["tokens"]["cat"]
    seen: list[int] = []

    def send(i: int) -> None:
        seen.append(server.request("POST", "/api/submissions", greedy(f"catbot{i}"), auth(cat))[0])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == [202] * 5 + [429] * 7, seen
    db = sqlite3.connect(f"file:{site['folder']}/contest.db?mode=ro", uri=True)
    stored = db.execute("SELECT COUNT(*) FROM submissions WHERE bot LIKE 'catbot%'").fetchone()[0]
    db.close()
    assert stored == 5


def local_app(folder: Path, **settings: Any) -> Any:
    return create_app(ServerSettings(folder, workers=False, **settings))


def test_many_authors_behind_one_address_share_a_limit(site: dict[str, Any], tmp_path: Path) -> None:
    # with open registration one address could make authors and upload as each of them: the
    # check queue's flood was bounded only per author
    store.init_contest(tmp_path / "c", "Flood")
    db = store.open_db(tmp_path / "c")
    tokens = [store.invite(db, f"eve{i}") for i in range(4)]
    db.close()
    with TestClient(local_app(tmp_path / "c", uploads_per_address=3)) as client:
        seen = [
            client.post("/api/submissions", content=greedy(f"eve{i}bot"), headers=auth(t)).status_code
            for i, t in enumerate(tokens)
        ]
    assert seen == [202, 202, 202, 429], seen


def test_the_leaderboard_costs_one_database_look_per_period_whoever_asks(
    site: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # each message a client sent made the server read the leaderboard again (an amplifier), each
    # socket read it on its own, and so did each page and API call (0.15 s at 34 000 games): now one
    # look per period serves them all
    from arena.server.contest import rounds

    looks = []
    real = rounds.leaderboard

    def counted(*args: Any) -> Any:
        looks.append(1)
        return real(*args)

    monkeypatch.setattr(rounds, "leaderboard", counted)
    with TestClient(local_app(site["folder"], live_seconds=600)) as client:
        sockets = [client.websocket_connect("/ws/leaderboard") for _ in range(4)]
        boards = [ws.__enter__().receive_json() for ws in sockets]
        for _ in range(300):
            sockets[0].send_text("again")
        sockets[0].send_bytes(b"\0" * 1000)
        for ws in sockets:
            ws.__exit__(None, None, None)
        pages = [client.get(path).status_code for path in ("/api/leaderboard", "/") * 10]
        assert client.get("/api/leaderboard?round=1").status_code == 200  # another round's: read when asked
    assert all(b["contest"] == "Red Cup" for b in boards) and pages == [200] * 20
    assert len(looks) == 2, len(looks)


def test_one_address_cannot_take_every_live_socket(site: dict[str, Any]) -> None:
    from starlette.websockets import WebSocketDisconnect

    with TestClient(local_app(site["folder"], max_live_per_address=2)) as client:
        with client.websocket_connect("/ws/leaderboard") as a, client.websocket_connect("/ws/leaderboard") as b:
            assert a.receive_json() and b.receive_json()
            with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws/leaderboard") as c:
                c.receive_json()
            assert refused.value.code == 1013
        with client.websocket_connect("/ws/leaderboard") as again:  # a closed socket frees its place
            assert again.receive_json()


def test_a_huge_websocket_frame_closes_that_socket_only(site: dict[str, Any]) -> None:
    import asyncio

    import websockets

    server = site["server"]

    async def attack() -> tuple[int | None, int]:
        url = server.url.replace("http", "ws") + "/ws/leaderboard"
        async with websockets.connect(url, max_size=None) as ws:
            await ws.recv()
            await ws.send("x" * (4 * 2**20))
            try:
                while True:
                    await asyncio.wait_for(ws.recv(), 20)
            except websockets.ConnectionClosed:
                pass
            return ws.close_code, server.get("/api/leaderboard")[0]

    code, status = asyncio.run(attack())
    assert code == 1009 and status == 200


def test_an_author_past_the_limit_costs_no_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # naming an upload parses it (up to 0.6 s of CPU on the event loop for 256 KiB of hostile
    # source): an author past the limit is refused before the parse
    from arena.server.routes import api

    parsed = []
    real = api.bot_name
    monkeypatch.setattr(api, "bot_name", lambda *a: parsed.append(1) or real(*a))
    store.init_contest(tmp_path / "c", "Parse")
    db = store.open_db(tmp_path / "c")
    eve = store.invite(db, "eve")
    db.close()
    with TestClient(local_app(tmp_path / "c", uploads_per_minute=2)) as client:
        seen = [
            client.post("/api/submissions", content=greedy(f"eve{i}"), headers=auth(eve)).status_code for i in range(5)
        ]
    assert seen == [202, 202, 429, 429, 429] and len(parsed) == 2


# -- authorisation: another author's things, the desk, sessions, CSRF --------------------------------


def test_an_author_reaches_nothing_of_another_author_nor_the_desk(site: dict[str, Any]) -> None:
    import httpx

    server, tokens, ids = site["server"], site["tokens"], site["ids"]
    ann_sub = ids["annbot"]
    for path in (f"/api/submissions/{ann_sub}",):
        status, data = server.get(path, tokens["ben"])
        assert status == 404 and is_json_4xx(status, data)  # as absent as a missing one
    status, data = server.request(
        "POST", "/api/bots/annbot/active", json.dumps({"submission": ann_sub}).encode(), auth(tokens["ben"])
    )
    assert status == 404
    status, data = server.request("POST", "/api/submissions", greedy("annbot"), auth(tokens["ben"]))
    assert status == 409 and "another author" in data["error"]  # nobody uploads under another's bot name
    status, data = server.request("POST", "/api/submissions", greedy("orgbot"), auth(site["organiser"]))
    assert status == 403
    with httpx.Client(base_url=server.url, timeout=30) as ben:
        csrf = signed_in(ben, tokens["ben"])
        assert ben.get(f"/submissions/{ann_sub}").status_code == 404
        forms = {
            "/bots/annbot/active": {"submission": str(ann_sub)},
            f"/desk/{ann_sub}/review": {"verdict": "rejected", "comment": "mine now"},
            "/desk/freeze": {"frozen": "1"},
            "/desk/final": {},
        }
        for path, fields in forms.items():
            answer = ben.post(path, data={**fields, "csrf": csrf})
            assert answer.status_code in (403, 404), (path, answer.status_code)
        for path in ("/desk", f"/desk/{ann_sub}"):
            assert ben.get(path).status_code == 403
    with httpx.Client(base_url=server.url, timeout=30) as ann:  # ben's failed check: its detail is ben's
        signed_in(ann, tokens["ann"])
        page = ann.get("/bots/faultbot").text
        assert "failed" in page and "ValueError" not in page and "PWNED" not in page
    status, view = server.get(f"/api/submissions/{ann_sub}", site["organiser"])
    assert view["review"] == "pending" and view["comment"] == ""
    assert server.get("/api/leaderboard")[1]["frozen"] is False


def altered(token: str) -> str:
    """``token`` with its last character changed (to another one: a token may end in "A" already)."""
    return token[:-1] + ("B" if token.endswith("A") else "A")


def test_forms_refuse_a_cross_site_post_whatever_its_type(site: dict[str, Any]) -> None:
    # the browser sends the session cookie (were SameSite not honoured); without the page's CSRF
    # token nothing changes: form-encoded, multipart, JSON or text/plain
    import httpx

    server, tokens = site["server"], site["tokens"]
    with httpx.Client(base_url=server.url, timeout=30) as ann:
        csrf = signed_in(ann, tokens["ann"])
        sub = str(site["ids"]["annbot"])
        evil = {"Origin": "http://evil.example", "Referer": "http://evil.example/"}
        attempts = [
            ann.post("/bots/annbot/active", data={"submission": sub}, headers=evil),
            ann.post("/bots/annbot/active", data={"submission": sub, "csrf": altered(csrf)}, headers=evil),
            ann.post("/bots/annbot/active", content=json.dumps({"submission": sub, "csrf": ""}), headers=evil),
            ann.post(
                "/bots/annbot/active", content=f"submission={sub}", headers={**evil, "Content-Type": "text/plain"}
            ),
            ann.post("/upload", files={"bot": ("x.py", greedy("csrfbot"))}, headers=evil),
            ann.post("/logout", headers=evil),
            # the API reads a bearer token only, never the session cookie: a cross-site JSON post is nobody
            ann.post("/api/bots/annbot/active", content=json.dumps({"submission": int(sub)}), headers=evil),
            ann.post("/api/submissions", content=greedy("csrfbot"), headers={**evil, "Content-Type": "text/plain"}),
        ]
        assert [a.status_code for a in attempts] == [403] * 6 + [401] * 2
        assert ann.get("/upload").status_code == 200  # still signed in: the logout was refused
    assert server.get("/bots/csrfbot")[0] == 404


def test_a_session_is_bound_to_its_contest_and_renewed_at_sign_in(tmp_path: Path) -> None:
    # replay of a contest's organiser cookie on another contest; fixation: a CSRF token (and
    # session) made before signing in is not the one after
    tokens = {}
    for name in ("a", "b"):
        tokens[name] = store.init_contest(tmp_path / name, name)
    with TestClient(local_app(tmp_path / "a")) as a, TestClient(local_app(tmp_path / "b")) as b:
        before = re.search(r'name="csrf" value="([^"]+)"', a.get("/login").text)
        assert before
        after = signed_in(a, tokens["a"])
        assert a.get("/desk").status_code == 200 and after != before.group(1)
        cookie = a.cookies.get("arena_session")
        assert cookie
        b.cookies.set("arena_session", cookie)
        assert b.get("/desk").status_code == 401
        b.cookies.clear()
        flags = b.get("/login").headers["set-cookie"].lower()  # the cookie is out of scripts' and other sites' reach
        assert "httponly" in flags and "samesite=strict" in flags


def test_no_name_passes_for_another_by_its_case_or_for_the_organiser(site: dict[str, Any], tmp_path: Path) -> None:
    # ben could upload "AnnBot" next to ann's "annbot", and an open registration could make
    # "Ann" or "organiser": the leaderboard showed them as if they were the others
    server, ben = site["server"], site["tokens"]["ben"]
    status, data = server.request("POST", "/api/submissions", greedy("AnnBot"), auth(ben))
    assert status == 409 and "annbot" in data["error"], data
    done = arena("contest", "invite", str(site["folder"]), "Ann")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    db = store.open_db(site["folder"])
    try:
        for name in ("ANN", "organiser", "Admin"):
            with pytest.raises(store.ContestError):
                store.invite(db, name)
    finally:
        db.close()
    store.init_contest(tmp_path / "c", "Open")
    with TestClient(local_app(tmp_path / "c", open_registration=True)) as client:
        assert client.post("/api/register", json={"name": "eve"}).status_code == 201
        for name in ("Eve", "Organizer"):
            answer = client.post("/api/register", json={"name": name})
            assert answer.status_code == 409 and set(answer.json()) == {"error"}, answer.text


def test_kill_9_in_the_middle_of_an_upload_and_of_its_check_leaves_no_half_row(site: dict[str, Any]) -> None:
    server, ann = site["server"], site["tokens"]["ann"]

    def rows() -> list[tuple[Any, ...]]:
        db = sqlite3.connect(f"file:{site['folder']}/contest.db?mode=ro", uri=True)
        try:
            return db.execute("SELECT id, bot, sha256, length(source) FROM submissions ORDER BY id").fetchall()
        finally:
            db.close()

    before = rows()
    body = greedy("halfbot") + b"#" * 100_000
    half = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    head = f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ann}\r\n"
    half.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body[: len(body) // 2])
    status, data = server.request("POST", "/api/submissions", greedy("wholebot"), auth(ann))  # queued for its check
    assert status == 202
    wait_for(lambda: server.get(f"/api/submissions/{data['id']}", ann)[1]["status"] != "queued", "its check to start")
    server.kill9()  # the upload half sent, the check (most likely) running
    half.close()
    server.start()
    after = rows()
    assert after[: len(before)] == before and [r[1] for r in after[len(before) :]] == ["wholebot"]
    wait_for(lambda: server.get(f"/api/submissions/{data['id']}", ann)[1]["status"] == "clean", "the check, again")


# -- stored XSS: every page that shows contestant text, in Chromium ---------------------------------


def test_no_contestant_text_runs_as_script_in_any_page(site: dict[str, Any]) -> None:
    import random

    import httpx

    from arena.server.ladder.matchmaker import LadderPlayer

    server, tokens, ids = site["server"], site["tokens"], site["ids"]
    assert server.get(f"/api/submissions/{ids['loudbot']}", site["organiser"])[1]["status"] == "clean"
    db = store.open_db(site["folder"])
    player = LadderPlayer(db)
    try:  # a few ladder games (the server's ladder is off in this module), with the loud bot seated
        while not db.execute("SELECT 1 FROM seats WHERE submission = ?", (ids["loudbot"],)).fetchone():
            player.play_block(random.Random(store.games_count(db)))
    finally:
        player.close()
    game = db.execute("SELECT game FROM seats WHERE submission = ? LIMIT 1", (ids["loudbot"],)).fetchone()[0]
    db.close()
    ben = int(tokens["ben"].split(".")[0][1:])
    db = store.open_db(site["folder"])  # a second version (stored as an upload is; its check is not the point)
    v2 = store.add_submission(db, ben, "loudbot", (LOUD + f"\n# v2 {XSS}\n").encode())
    store.finish_check(db, v2, {"clean": False}, "not checked here")
    prepare_view(db, v2)  # the desk's view, as the check worker makes it (its diff holds the markup too)
    db.close()
    pages = {
        "organiser": [f"/desk/{ids['loudbot']}", f"/desk/{ids['faultbot']}", f"/desk/{v2}"],  # source, report, diff
        "ben": [f"/submissions/{ids['faultbot']}", "/bots/faultbot", f"/games/{game}"],  # report, error, output
    }
    cookies = {}
    for who in pages:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            csrf = signed_in(client, site["organiser"] if who == "organiser" else tokens[who])
            cookies[who] = client.cookies["arena_session"]
            if who == "organiser":  # a review comment the author reads
                answer = client.post(
                    f"/desk/{ids['faultbot']}/review", data={"csrf": csrf, "verdict": "rejected", "comment": XSS}
                )
                assert answer.status_code == 303
    with chromium() as browser:
        shown, dialogs = "", []
        context = browser.new_context()
        page = context.new_page()
        page.on("dialog", lambda d: dialogs.append(d.message))
        for who, paths in pages.items():
            context.clear_cookies()
            context.add_cookies([{"name": "arena_session", "value": cookies[who], "url": server.url}])
            for path in paths:
                assert page.goto(server.url + path).status == 200, path
                assert page.evaluate("window.PWNED") is None, (who, path)
                assert page.evaluate("document.querySelectorAll('img[src=x], svg[onload]').length") == 0
                shown += page.inner_text("body")
        assert dialogs == []
    # the text is shown, as text: source, diff, report, fault, printed output, table talk, comment
    assert shown.count("window.PWNED=2</script>") >= 7, shown.count("window.PWNED=2</script>")


def test_one_author_flooding_the_check_queue_does_not_hold_back_the_others(tmp_path: Path) -> None:
    # the queue was first come, first checked: an author uploading at the limit kept every other
    # author's check waiting behind theirs; now authors take turns
    store.init_contest(tmp_path / "c", "Queue")
    db = store.open_db(tmp_path / "c")
    ann, ben, cat = (int(store.invite(db, who).split(".")[0][1:]) for who in ("ann", "ben", "cat"))
    flood = [store.add_submission(db, ann, f"ann{i}", b"x = 1\n") for i in range(5)]
    others = [store.add_submission(db, ben, "ben0", b"x = 1\n"), store.add_submission(db, cat, "cat0", b"x = 1\n")]
    order = []
    while (row := store.claim_check(db, 1)) is not None:  # workers claim while the others check
        order.append(int(row["id"]))
    assert order == [flood[0], *others]  # one check of ann's at a time: the others' come next
    for sid in order:
        store.finish_check(db, sid, {"clean": True}, None)
    while (row := store.claim_check(db, 1)) is not None:
        order.append(int(row["id"]))
        store.finish_check(db, int(row["id"]), {"clean": True}, None)
    db.close()
    assert order[3:] == flood[1:]


def test_one_authors_slow_check_holds_one_check_worker_never_another_authors_check(tmp_path: Path) -> None:
    # a bot within its limits (0.6 s a move, 30 s a game) made a clean check that held the only
    # check worker 160 s: another author's 0.3 s check waited 156.7 s behind it (an independent
    # attack); now an author has one check running at a time, and the server runs two workers
    store.init_contest(tmp_path / "c", "Slow")
    db = store.open_db(tmp_path / "c")
    ann, ben = (int(store.invite(db, who).split(".")[0][1:]) for who in ("ann", "ben"))
    slow = [store.add_submission(db, ann, f"slow{i}", b"x = 1\n") for i in range(3)]
    quick = store.add_submission(db, ben, "quick", b"x = 1\n")
    first = store.claim_check(db, 1)  # worker 1 takes ann's slow check, and is held by it
    assert first is not None and int(first["id"]) == slow[0]
    second = store.claim_check(db, 2)  # worker 2: never ann's next, ben's
    assert second is not None and int(second["id"]) == quick
    store.finish_check(db, quick, {"clean": True}, None)
    assert store.claim_check(db, 2) is None  # ann's others wait for ann's running check
    store.finish_check(db, slow[0], {"clean": True}, None)
    third = store.claim_check(db, 2)
    assert third is not None and int(third["id"]) == slow[1]
    # a freed worker took the same author's older upload before another's (the older id won the tie):
    # an author with a backlog of slow checks kept a worker for good (a second independent attack)
    late = store.add_submission(db, ben, "quick2", b"x = 1\n")
    store.finish_check(db, slow[1], {"clean": True}, None)
    fourth = store.claim_check(db, 1)
    assert fourth is not None and int(fourth["id"]) == late  # ben, served longest ago, before ann's slow[2]
    db.close()
    assert ServerSettings(tmp_path).check_workers == 2


def test_a_bots_page_reads_its_latest_games_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the page read, decoded and drew every game the bot ever played (0.95 s and 330 KB at 21 000
    # games, growing with each): an anonymous client asking for it again and again held the
    # server; now it reads its latest HISTORY games (0.11 s at 21 000)
    from arena.server.routes import dashboard, pages

    monkeypatch.setattr(dashboard, "HISTORY", 20)
    store.init_contest(tmp_path / "c", "Many")
    db = store.open_db(tmp_path / "c")
    ann, ben = (int(store.invite(db, who).split(".")[0][1:]) for who in ("ann", "ben"))
    sids = [store.add_submission(db, ann, "annbot", b"x = 1\n"), store.add_submission(db, ben, "benbot", b"x = 1\n")]
    for sid in sids:
        store.finish_check(db, sid, {"clean": True}, None)
    block = store.new_block(db, sids)
    for n in range(200):
        store.record_game(db, f"b{block}-r{n}", block, 0, sids, [1, 2], [0, 9], [(0, "exception", f"boom{n}", 1)], [])
    data = pages.bot_data(db, "annbot", ("author", ann))
    create_app(ServerSettings(tmp_path / "c", workers=False))  # the server's indexes, made when it starts
    indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.close()
    assert "games_block" in indexes  # the leaderboard counts a round's games in it (8 times cheaper at 50 000)
    assert data is not None
    assert len(data["history"]["points"]) == 20 and len(data["versions"]) == 1  # the latest 20 drawn
    games = data["games"]  # a page of them: the same work on page one or page four
    assert len(games["games"]) == dashboard.PAGE and games["games"][0]["key"] == f"b{block}-r199"
    assert games["games"][0]["mine"][0]["details"] == [
        {"kind": "exception", "detail": "boom199", "count": 1, "rounds": [1]}
    ]


def test_a_check_report_of_any_shape_is_shown_never_a_500(tmp_path: Path) -> None:
    # the check of an upload in a damaged round stores {"clean": false}: its submission page and
    # its review page were 500s (the templates read rows it lacks); so was any report edited in the
    # database (the organiser's database is hostile input too)
    organiser = store.init_contest(tmp_path / "c", "Shapes")
    db = store.open_db(tmp_path / "c")
    eve = store.invite(db, "eve")
    reports = [
        {"clean": False},
        {"problems": "x", "faults": [1, {"kind": "<b>k</b>"}], "tables": [{"places": 3}], "warnings": 7},
        {"move_time": {"moves": "many"}, "tables": [{"players": 2, "games": 1, "places": [1, 2], "faults": 0}]},
        [1, 2],
    ]
    sids = []
    for i, report in enumerate([*reports, None]):
        sid = store.add_submission(db, int(eve.split(".")[0][1:]), f"shape{i}", b"x = 1\n")
        text = json.dumps(report) if report is not None else "[[[[ not JSON"
        db.execute("UPDATE submissions SET status = 'failed', report = ? WHERE id = ?", (text, sid))
        sids.append(sid)
    db.close()
    with TestClient(local_app(tmp_path / "c")) as author, TestClient(local_app(tmp_path / "c")) as desk:
        signed_in(author, eve)
        signed_in(desk, organiser)
        for sid in sids:
            assert author.get(f"/submissions/{sid}").status_code == 200
            assert author.get(f"/api/submissions/{sid}", headers=auth(eve)).status_code == 200
            assert desk.get(f"/desk/{sid}").status_code == 200


def test_damaged_rows_in_the_database_are_shown_as_far_as_they_can_be_never_a_500(tmp_path: Path) -> None:
    # rows edited in the database (SQLite keeps any type in any column): a game's seating or faults
    # not JSON or of another shape, an id past 64 bits, a rating or a seat's rating that is text, a
    # source that is text; each made the leaderboard, the bot's page, the game's page or the
    # desk's review a 500 for everyone
    import random

    from arena.server.ladder.matchmaker import LadderPlayer

    organiser = store.init_contest(tmp_path / "c", "Damaged")
    db = store.open_db(tmp_path / "c")
    ann = store.invite(db, "ann")
    author = int(ann.split(".")[0][1:])
    sids = [store.add_submission(db, author, name, greedy(name)) for name in ("annbot", "annbot2")]
    for sid in sids:
        store.finish_check(db, sid, {"clean": True}, None)
    player = LadderPlayer(db)
    try:
        player.play_block(random.Random(1))
    finally:
        player.close()
    key = db.execute("SELECT key FROM games LIMIT 1").fetchone()[0]
    damage = [
        ("UPDATE games SET seating = ? WHERE key = ?", ("x", key)),
        ("UPDATE games SET seating = ? WHERE key = ?", (json.dumps([2**70, 1]), key)),
        ("UPDATE games SET faults = ? WHERE key = ?", ("[1]", key)),
        ("UPDATE games SET faults = ? WHERE key = ?", (json.dumps([[0, 1]]), key)),
        ("UPDATE games SET faults = ? WHERE key = ?", (json.dumps([[0, "exception", None, 1], "x"]), key)),
        ("UPDATE games SET faults = ? WHERE key = ?", ("[" * 5000, key)),
        ("UPDATE ratings SET mu = ?, games = ?", ("x", "y")),
        ("UPDATE seats SET mu = ?", ("x",)),
        ("UPDATE submissions SET version = ?", ("v",)),
    ]
    pages = ["/", "/api/leaderboard", "/bots/annbot", f"/games/{key}", f"/submissions/{sids[1]}"]
    last = ("UPDATE submissions SET source = ? WHERE id = ?", ("text, not bytes", sids[1]))  # after the ladder plays
    seen = []
    with TestClient(local_app(tmp_path / "c", live_seconds=0)) as reader, TestClient(local_app(tmp_path / "c")) as desk:
        signed_in(reader, ann)
        signed_in(desk, organiser)
        for sql, values in [*damage, last]:
            db.execute(sql, values)
            seen += [(sql, path, reader.get(path).status_code) for path in pages]
            seen += [(sql, path, desk.get(path).status_code) for path in (f"/desk/{sids[1]}", f"/games/{key}")]
    player = LadderPlayer(db)
    try:  # and the ladder goes on (a rating that is text crashed its worker, again and again)
        assert player.play_block(random.Random(2)) > 0
    finally:
        player.close()
    db.close()
    assert [s for s in seen if s[2] != 200] == []


def test_signing_out_voids_every_copy_of_the_session(site: dict[str, Any]) -> None:
    # a session lives in its signed cookie: signing out cleared the browser's copy only, and a
    # copy (taken off a shared machine, a proxy log) stayed valid for 14 days
    import httpx

    server, ann = site["server"], site["tokens"]["ann"]
    with httpx.Client(base_url=server.url, timeout=30) as phone, httpx.Client(base_url=server.url, timeout=30) as pc:
        csrf = signed_in(phone, ann)
        signed_in(pc, ann)
        copied = phone.cookies["arena_session"]
        assert phone.get("/upload").status_code == 200 and pc.get("/upload").status_code == 200
        assert phone.post("/logout", data={"csrf": csrf}).status_code in (200, 303)
        with httpx.Client(base_url=server.url, timeout=30, cookies={"arena_session": copied}) as thief:
            assert thief.get("/upload").status_code == 401
        assert pc.get("/upload").status_code == 401  # signed out everywhere
        signed_in(pc, ann)  # signing in again works
        assert pc.get("/upload").status_code == 200
