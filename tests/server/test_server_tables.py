"""Tables over the network (issue 21, items 6 and 8): people play the ladder's bots at a server started
as users start it, each seat a websocket carrying the seat's R10 view only; forged moves are refused
without harm to the table; a person who drops comes back to the same view; the game is recorded
outside the ladder's ratings and shown in the viewer; and the same in Chromium, by clicking."""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from support.browser import seat_step
from support.server import ROOT, Server, arena, bot_file, token_of, wait_for
from support.tables import Person, a_move, error_of, state_of
from websockets.exceptions import ConnectionClosed, InvalidStatus

from arena.game.visibility import game_seen_by
from arena.server.store import database as store
from arena.server.store import table_games as tablestore
from arena.server.tables.hub import BotSeat, Hub
from arena.server.workers.supervisor import Supervisor

pytestmark = [pytest.mark.long, pytest.mark.filterwarnings("ignore:connect.. must be used:DeprecationWarning")]


#: Where the screenshots go (for a person to look at); the test's temporary folder by default.
SHOTS = os.environ.get("ARENA_SHOTS")


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("tables")
    folder = tmp / "cup"
    organiser = token_of(arena("contest", "init", str(folder), "--name", "Table Cup").stdout.splitlines()[-1])
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    server = Server(folder)
    server.start()
    try:
        done = arena("submit", str(bot_file(tmp, "annbot", "random")), "--server", server.url, "--token", ann)
        assert done.returncode == 0, done.stderr
        links = {}
        for name in ("zed", "yan", "xia", "wu", "kim"):
            out = arena("contest", "guest", str(folder), "--name", name, "--url", server.url)
            assert out.returncode == 0, out.stderr
            links[name] = out.stdout.strip().rsplit(" ", 1)[1]
        yield {"server": server, "folder": folder, "organiser": organiser, "ann": ann, "links": links}
    finally:
        server.stop()


def test_two_people_and_a_bot_play_a_table_over_websockets(contest: dict[str, Any]) -> None:
    server: Server = contest["server"]
    zed, yan = Person(server, contest["links"]["zed"]), Person(server, contest["links"]["yan"])
    status, _, made = zed.call("POST", "/api/tables", {"people": 2, "bots": ["annbot"], "limit": 30})
    assert status == 201, made
    key = made["id"]
    # yan joins by the table's link: the page offers the seat, the API takes it
    status, _, html = yan.call("GET", f"/tables/{key}")
    assert status == 200 and "Take a seat" in html
    assert yan.call("POST", f"/api/tables/{key}/join", {})[0] == 200
    assert yan.call("POST", f"/api/tables/{key}/join", b"{}", {"Content-Type": "text/plain"})[0] == 415
    people = {0: zed, 1: yan}
    socks = {0: zed.socket(key), 1: yan.socket(key)}
    rng = random.Random(21)
    seen: dict[int, list[dict[str, Any]]] = {0: [], 1: []}
    hands: dict[int, set[str]] = {0: set(), 1: set()}
    states: dict[int, dict[str, Any]] = {0: {}, 1: {}}

    def take(seat: int, msg: dict[str, Any]) -> None:
        states[seat] = msg
        seen[seat].extend(msg.get("events", [])[len(seen[seat]) :])
        hands[seat].update(msg.get("hand", []))

    # the first person to move: forged and malformed actions are refused, the table plays on
    while not any(st.get("phase") == "move" for st in states.values()):
        for seat, sock in socks.items():
            try:
                take(seat, json.loads(sock.recv(timeout=0.05)))
            except TimeoutError:
                continue
    mover = next(seat for seat, st in states.items() if st.get("phase") == "move")
    other = 1 - mover
    first, ws = states[mover], socks[mover]
    ws.send("not json")
    assert "Expecting value" in error_of(ws)
    ws.send(json.dumps({"action": "put", "card": "zz"}))
    assert error_of(ws)
    ws.send(json.dumps({"action": "put", "card": "x" * 5000}))
    assert "at most 4096 bytes" in error_of(ws)
    foreign = next(c for r in "6789" for c in (r + s for s in "schd") if c not in first["hand"])
    ws.send(json.dumps({"action": "put", "card": foreign}))
    refused = state_of(ws, lambda s: s.get("phase") == "move" and s["version"] > first["version"])
    assert any("not allowed" in m for m in refused["messages"]) and refused["hand"] == first["hand"]
    # the mover drops and comes back: the same view, at once
    ws.close()
    socks[mover] = people[mover].socket(key)
    again = state_of(socks[mover], lambda s: True)
    assert again["version"] == refused["version"] and again["hand"] == refused["hand"]
    assert again["events"] == refused["events"]
    take(mover, again)
    # the other cannot move for the mover: not theirs
    socks[other].send(json.dumps({"action": "draw"}))
    assert "not your move" in error_of(socks[other])

    # both play to the end
    done: dict[int, dict[str, Any]] = {}
    while len(done) < 2:
        for seat, sock in socks.items():
            if seat in done:
                continue
            try:
                msg = json.loads(sock.recv(timeout=0.05))
            except TimeoutError:
                st = states[seat]
                if st.get("phase") == "move" and not st.get("sent"):
                    st["sent"] = True
                    sock.send(json.dumps(a_move(st, rng)))
                continue
            if "error" in msg:
                states[seat]["sent"] = False
                continue
            take(seat, msg)
            if msg["phase"] == "closed":
                done[seat] = msg
    assert done[0]["result"] == done[1]["result"] and done[0]["record"] == f"/tables/{key}/game"
    for sock in socks.values():
        sock.close()

    # recorded outside the ladder, and each socket saw only its seat's view (R10)
    db = store.open_db(contest["folder"])
    try:
        seats, log = tablestore.game(db, key) or ([], [])
        assert db.execute("SELECT COUNT(*) FROM seats WHERE game LIKE 't-%'").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM games WHERE key = ?", (key,)).fetchone()[0] == 0
    finally:
        db.close()
    assert [s["name"] for s in seats] == ["guest-zed", "guest-yan", seats[2]["name"]]
    assert seats[2]["name"] == "annbot v1"
    end = next(e for e in reversed(log) if e["event"] == "end")
    assert end["places"] == done[0]["result"]["places"]
    public = {json.dumps(e, sort_keys=True) for e in game_seen_by(log, "public")}
    for seat in (0, 1):
        sent = [json.dumps(e, sort_keys=True) for e in seen[seat]]
        assert sent and all(e in public for e in sent), "a socket got more than the public history"
        own = json.dumps(game_seen_by(log, seat))  # the cards a seat was shown are its own
        assert hands[seat] and all(f'"{card}"' in own for card in hands[seat])
    # the viewer shows it: the public view to a stranger, the seat's own view to zed
    status, _, page = zed.call("GET", f"/tables/{key}/game")
    assert status == 200 and "Table game" in page
    assert server.request("GET", f"/tables/{key}/game")[0] == 200
    status, _, listing = zed.call("GET", "/tables")
    assert status == 200 and f"/tables/{key}/game" in listing


def test_refusals_are_json_4xx_and_sockets_are_seated_only(contest: dict[str, Any]) -> None:
    server: Server = contest["server"]
    zed = Person(server, contest["links"]["xia"])
    link = contest["links"]["xia"]
    forged = link[:-3] + ("AAA" if not link.endswith("AAA") else "BBB")
    status, _, body = zed.call("GET", forged.split(server.url, 1)[1])
    assert status == 403 and "not valid" in body["error"]
    stranger = Person.__new__(Person)
    stranger.server, stranger.cookie = server, "arena_session=forged"
    assert stranger.call("POST", "/api/tables", {"people": 1, "bots": ["annbot"]})[0] == 401
    assert zed.call("POST", "/api/tables", {"people": 1, "bots": ["nobot"]})[0] == 400
    assert zed.call("POST", "/api/tables", {"people": 1, "bots": [], "limit": 30})[0] == 400  # one seat
    assert zed.call("POST", "/api/tables", {"people": 1, "bots": ["annbot"], "limit": 9})[0] == 400
    assert zed.call("POST", "/api/tables", b"[1", {"Content-Type": "application/json"})[0] == 400
    assert zed.call("POST", "/api/tables", {"people": 1}, {"Origin": "http://evil.example"})[0] == 403
    made = [zed.call("POST", "/api/tables", {"people": 2, "bots": ["annbot"]}) for _ in range(3)]
    assert [m[0] for m in made] == [201, 201, 429]  # tables per person
    key = made[0][2]["id"]
    assert zed.call("GET", "/tables/nosuchtable")[0] == 404
    with pytest.raises(InvalidStatus) as denied:
        stranger.socket(key)
    assert denied.value.response.status_code == 401
    yan = Person(server, contest["links"]["wu"])
    with pytest.raises(InvalidStatus) as denied:
        yan.socket(key)  # not seated here
    assert denied.value.response.status_code == 403
    with pytest.raises(InvalidStatus) as denied:
        zed.socket(key, origin="http://evil.example")
    assert denied.value.response.status_code == 403
    ws = zed.socket(key)
    waiting = state_of(ws, lambda s: True)
    assert waiting["phase"] == "waiting" and "1 of 2" in waiting["messages"][0]
    ws.send(json.dumps({"action": "draw"}))
    assert "not your move" in error_of(ws)
    ws.send("x" * 100_000)  # past the server's frame limit: the connection closes unread, the table stays
    with pytest.raises(ConnectionClosed):
        state_of(ws, lambda s: False, bound=30)
    ws = zed.socket(key)
    assert state_of(ws, lambda s: True)["version"] == waiting["version"]
    ws.send("[]")
    assert "an action is an object" in error_of(ws)
    # a second page of the same person takes the seat over; the first stops (and is told why)
    second = zed.socket(key)
    assert state_of(second, lambda s: True)["phase"] == "waiting"
    with pytest.raises(ConnectionClosed) as closed:
        state_of(ws, lambda s: False, bound=30)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4001
    second.close()


def finished_log(folder: Path, table: Any) -> list[dict[str, Any]]:
    """The record of ``table``'s game, once it is over."""
    wait_for(lambda: table.state == "over", "the table to finish", 60)
    db = sqlite3.connect(folder / "contest.db")
    db.row_factory = sqlite3.Row
    try:
        _, log = tablestore.game(db, table.id) or ([], [])
    finally:
        db.close()
    return list(log)


def stored(folder: Path, bot: str, source: bytes) -> int:
    """A submission of ``bot`` by a new author in the contest of ``folder``: its id."""
    db = store.open_db(folder)
    try:
        who = store.who(db, store.invite(db, f"author-{bot}"))
        assert who is not None
        return store.add_submission(db, who[1], bot, source)
    finally:
        db.close()


@contextmanager
def playing_hub(folder: Path, move_seconds: float) -> Iterator[Hub]:
    """A Hub and its tables worker, started as the server starts them (its supervisor)."""
    hub = Hub(folder, move_seconds=move_seconds)
    supervisor = Supervisor(folder, checkers=0, ladder=0, tables=hub.attach)
    supervisor.start()
    try:
        yield hub
    finally:
        supervisor.stop()


def test_a_person_who_does_not_move_is_played_by_the_fallback(tmp_path: Path) -> None:
    """The per-move limit: no move in time is a timeout fault and the fallback's move; three retire
    the seat and the game still ends and is recorded (the table never hangs)."""
    store.init_contest(tmp_path, "T")
    sid = stored(tmp_path, "randombot", (ROOT / "bots" / "random.py").read_bytes())
    with playing_hub(tmp_path, 0.2) as hub:
        table = hub.open(("guest", "g1"), "guest-sleepy", 1, [BotSeat(sid, "randombot")], 10)
        log = finished_log(tmp_path, table)
    faults = [(e["seat"], e["kind"]) for e in log if e["event"] == "fault"]
    assert faults[:4] == [(0, "timeout")] * 3 + [(0, "retired")]
    assert any(e["event"] == "end" for e in log)
    assert table.people()[0].snapshot()["phase"] == "closed"


#: Says the first number its ``random`` gives, then plays as the demo bot does.
TELLER = """\"\"\"Teller: says its random's first draw.\"\"\"

import random


class Bot:
    told = False

    def move(self, turn):
        if not self.told:
            turn.say(f"R {random.getrandbits(60)}")
            self.told = True
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while turn.puttable() and not turn.can_finish():
            card = turn.puttable()[0]
            turn.put(card, "h" if card.rank == "j" else None)
        while not turn.can_finish() and turn.can_draw():
            turn.draw()
        turn.finish()
"""


def test_a_tables_deal_seed_tells_nothing_of_its_bots_seeds(tmp_path: Path) -> None:
    """The attack: a table used one random number as both the game's deal seed (in its record)
    and the bots' key, so whoever holds the record computed each bot's ``random``. Both now come
    from a fresh secret seed in their own domains (docs/security/forward-model.md "Seeds"), a new one a game."""
    from arena.game.seeds import derive_seed

    store.init_contest(tmp_path, "T")
    sid = stored(tmp_path, "teller", TELLER.encode())
    seeds, told = [], []
    with playing_hub(tmp_path, 0.2) as hub:
        tables = [hub.open(("guest", g), f"guest-{g}", 1, [BotSeat(sid, "teller")], 10) for g in ("g1", "g2")]
        logs = [finished_log(tmp_path, table) for table in tables]
    for log in logs:
        said = [e["text"] for e in log if e["event"] == "say" and e["seat"] == 1 and e["text"].startswith("R ")]
        assert said, "the bot played and said its number"
        seeds.append(log[0]["seed"])
        told.append(int(said[0].split()[1]))
        # What the record's seed would give the bot at seat 1 if it were the bots' key:
        assert random.Random(derive_seed(seeds[-1], "bot", 1)).getrandbits(60) != told[-1]
    assert seeds[0] != seeds[1] and told[0] != told[1]  # a fresh secret seed a game


#: One click of whatever the seat may do now (the suit of a jack, a playable card, finish, draw).
STEP = seat_step(1)
SETTLED = (
    "() => ['move', 'closed'].includes(document.body.dataset.phase) && "
    "!document.querySelector('#table').dataset.animating"
)


def test_a_guest_plays_a_network_table_to_the_end_by_clicking(
    browser: Any, contest: dict[str, Any], tmp_path: Path
) -> None:
    """In Chromium: a guest link, a table against a bot of the ladder played to the end by clicking (a
    reload mid-game comes back to the same seat), the record in the viewer; no console error;
    screenshots at desktop and phone sizes."""
    server: Server = contest["server"]
    shots = Path(SHOTS) if SHOTS else tmp_path
    link = contest["links"]["kim"]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(link)
    page.wait_for_url("**/tables")
    assert "guest-kim" in page.text_content("#open")
    page.fill("#limit", "30")  # a game of a few rounds: at 10 a house bot could end it before the fourth click
    if SHOTS:  # for a person to look at (ARENA_SHOTS=DIR); they cost CPU
        page.screenshot(path=str(shots / "tables-1280.png"), full_page=True)
    page.click("#open-table")
    page.wait_for_url(re.compile(r".*/tables/[\w-]+$"))
    table_url = page.url
    page.goto(table_url + "?speed=100")
    clicks, reloaded, again = 0, False, 0
    for _ in range(2000):  # steps, not seconds: a loaded machine plays the same game, slower (90 s failed)
        page.wait_for_function(SETTLED, timeout=60_000)
        if page.get_attribute("body", "data-phase") != "move":
            break
        version = page.get_attribute("body", "data-version")
        if clicks == 3 and not reloaded:  # the person drops and comes back: the same seat, the same view
            hand = page.locator(".seat.you .hand .card").count()
            if SHOTS:
                page.screenshot(path=str(shots / "table-play-1280.png"))
            page.reload()
            page.wait_for_function(SETTLED, timeout=60_000)
            assert page.get_attribute("body", "data-version") == version
            assert page.locator(".seat.you .hand .card").count() == hand
            reloaded = True
        did = page.evaluate(STEP)
        if did in ("wait", "jack"):
            continue
        clicks += 1
        try:
            page.wait_for_function(f"() => document.body.dataset.version !== '{version}'", timeout=30_000)
        except PlaywrightTimeout:  # seen twice in ~35 runs, never with the page dumped: a person clicks again
            again += 1
            assert again <= 2, (did, clicks, page.text_content("#status"), errors)
    page.wait_for_function("() => document.body.dataset.phase === 'closed'", timeout=60_000)
    page.wait_for_selector("#record:not([hidden])")
    assert "over" in (page.text_content("#status") or "")
    if SHOTS:
        page.screenshot(path=str(shots / "table-over-1280.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    if SHOTS:
        page.screenshot(path=str(shots / "table-over-390.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.click("#record")
    page.wait_for_url(re.compile(r".*/game(#.*)?$"))  # the viewer may have put its place in the hash already
    page.wait_for_selector("#table .seat")
    if SHOTS:
        page.screenshot(path=str(shots / "table-record-1280.png"))
    page.goto(server.url + "/tables")
    assert page.locator(f"a[href='{table_url.split(server.url, 1)[1]}/game']").count() == 1
    page.set_viewport_size({"width": 390, "height": 844})
    if SHOTS:
        page.screenshot(path=str(shots / "tables-390.png"), full_page=True)
    assert reloaded and clicks > 3
    assert errors == []
    page.close()


def test_guest_links_from_the_desk_end_and_grant_only_the_tables(tmp_path: Path) -> None:
    import warnings

    from arena.server.http.app import create_app
    from arena.server.http.settings import ServerSettings
    from arena.server.routes.tables import guest_link

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    organiser = store.init_contest(tmp_path, "Cup")
    db = store.open_db(tmp_path)
    secret, ann = store.setting(db, "session_key"), store.invite(db, "ann")
    db.close()

    def login(client: Any, token: str) -> None:
        csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
        assert csrf and client.post("/login", data={"token": token, "csrf": csrf.group(1)}).status_code == 200

    with TestClient(create_app(ServerSettings(tmp_path, workers=False)), base_url="http://127.0.0.1:8000") as org:
        login(org, organiser)
        csrf = re.search(r'name="csrf" value="([^"]+)"', org.get("/desk").text)
        assert csrf
        assert org.post("/desk/guest", data={"name": "lee"}).status_code == 403  # no CSRF token
        assert org.post("/desk/guest", data={"name": "<b>", "csrf": csrf.group(1)}).status_code == 400
        made = org.post("/desk/guest", data={"name": "lee", "csrf": csrf.group(1)})
        link = re.search(r'<pre class="code" id="link">([^<]+)</pre>', made.text)
        assert made.status_code == 200 and link
        with TestClient(org.app, base_url="http://127.0.0.1:8000") as guest:
            assert guest.get("/tables").status_code == 200 and "guest-lee" not in guest.get("/tables").text
            landed = guest.get(link.group(1).split("8000", 1)[1])
            assert landed.status_code == 200 and "You play as <b>guest-lee</b>" in landed.text
            assert guest.get("/upload").status_code == 401  # a guest only plays
            assert guest.get("/desk").status_code == 401
        with TestClient(org.app) as late:
            expired = late.get(guest_link(secret, "old", hours=-1), follow_redirects=False)
            assert expired.status_code == 403 and "past its end" in expired.json()["error"]
            other = late.get(guest_link("another contest's secret", "lee"), follow_redirects=False)
            assert other.status_code == 403
        with TestClient(org.app) as author:
            login(author, ann)
            assert "You play as <b>ann</b>" in author.get(link.group(1).split("8000", 1)[1]).text


def test_a_page_cannot_grow_a_table_without_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack: every action a person sends when asked is kept (a restarted table replays them),
    a refused one too, so a page sending refused puts for ever grew the database without end. Past
    MAX_KEPT actions a table keeps, each of the person's moves times out (three retire the seat):
    the table keeps a bounded number, and its game ends and is recorded."""
    import io

    from arena.server.tables import worker as tables_worker

    monkeypatch.setattr(tables_worker, "MAX_KEPT", 12)
    store.init_contest(tmp_path, "T")
    sid = stored(tmp_path, "randombot", (ROOT / "bots" / "random.py").read_bytes())
    hub = Hub(tmp_path, move_seconds=60)  # opens and keeps the table; the worker here plays it
    table = hub.open(("guest", "g1"), "guest-flood", 1, [BotSeat(sid, "randombot")], 125)
    worker = tables_worker.TablesWorker(tmp_path, tables_worker.Outbox(io.BytesIO()))
    worker.scan()
    run = worker.runs[table.id]
    person, refused = run.people[0], 0
    while run.thread.is_alive():
        with person.cond:
            state = dict(person.state)
        if state.get("phase") == "move" and person.actions.empty():
            foreign = next(c for c in ("6s", "6c", "6h", "6d", "7s", "7c") if c not in state["hand"])
            refused += person.offer({"action": "put", "card": foreign}) is None
        time.sleep(0.005)
    db = store.open_db(tmp_path)
    try:
        _, log = tablestore.game(db, table.id) or ([], [])
    finally:
        db.close()
    assert refused > 12 and run.added <= 12 + 3, (refused, run.added, log[-1:])
    faults = [(e["seat"], e["kind"], e["detail"]) for e in log if e["event"] == "fault"]
    assert faults[:3] == [(0, "timeout", "more actions than a table keeps")] * 3 and faults[3][:2] == (0, "retired")
