"""Tables and the server's process (issue 27 item 4, issue 30 item 4): a table's referee work, a
forward-model search included, is the tables worker's CPU and not the server's; a table survives a
``kill -9`` of the server and resumes where it was; a game whose replay is not the same is recorded
as abandoned with what was played; and a table nobody comes back to still ends and is recorded.
Each on a server started as users start it (``arena serve``), killed with SIGKILL."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import seat_step
from support.server import Server, arena, bot_file, token_of, wait_for
from support.tables import Person, a_move, closed, play, state_of

from arena.game.visibility import PUBLIC, game_seen_by
from arena.server.store import table_games as tablestore

pytestmark = [
    pytest.mark.long,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:connect.. must be used:DeprecationWarning"),
]

BOTS = Path(__file__).parent / "bots"


def read_db(folder: Path, fn: Any, *args: Any) -> Any:
    db = sqlite3.connect(folder / "contest.db")
    db.row_factory = sqlite3.Row
    try:
        return fn(db, *args)
    finally:
        db.close()


def moves_kept(db: sqlite3.Connection, key: str) -> int:
    return int(db.execute("SELECT COUNT(*) FROM table_moves WHERE key = ?", (key,)).fetchone()[0])


def live_keys(db: sqlite3.Connection) -> list[str]:
    return [str(r[0]) for r in db.execute("SELECT key FROM live_tables")]


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) process ``pid`` spent itself, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tables_workers(server: Server) -> list[int]:
    return [p for p in server.workers() if b"\x00tables\x00" in Path(f"/proc/{p}/cmdline").read_bytes()]


def restart(server: Server) -> None:
    """``kill -9`` the server; once its workers are gone, start it again as users do."""
    workers = server.workers()
    server.kill9()
    wait_for(lambda: not any(Path(f"/proc/{p}").exists() for p in workers), "the workers to see the server is gone")
    server.start()


def public_prefix(events: list[dict[str, Any]], log: list[dict[str, Any]]) -> bool:
    """Whether ``events`` (what a seat's page was sent) are the public view of ``log``'s first events."""
    public = [json.dumps(e, sort_keys=True) for e in game_seen_by(log, PUBLIC)]
    seen = [json.dumps(e, sort_keys=True) for e in events]
    return bool(seen) and public[: len(seen)] == seen


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("tables-restart")
    folder = tmp / "cup"
    token_of(arena("contest", "init", str(folder), "--name", "Restart Cup").stdout.splitlines()[-1])
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    server = Server(folder, "--ladder-workers", "0")
    server.start()
    try:
        for name, path in (
            ("annbot", bot_file(tmp, "annbot", "random")),
            ("dicebot", BOTS / "dice.js"),
            ("heavybot", BOTS / "heavy_search.js"),
        ):
            if path.suffix == ".js":
                path = Path(shutil.copy(path, tmp / f"{name}.js"))
            done = arena("submit", str(path), "--server", server.url, "--token", ann)
            assert done.returncode == 0 and "active on the ladder" in done.stdout, done.stdout + done.stderr
        links = {}
        for name in ("zed", "yan", "wu", "kim", "lee", "ada"):
            out = arena("contest", "guest", str(folder), "--name", name, "--url", server.url)
            assert out.returncode == 0, out.stderr
            links[name] = out.stdout.strip().rsplit(" ", 1)[1]
        yield {"server": server, "folder": folder, "links": links}
    finally:
        err = server.stop()
    # pages that closed and tables that ended leave no traceback in the server's log (since its last start)
    assert "Traceback" not in err, err[-3000:]


def test_the_servers_process_does_none_of_a_tables_referee_work(contest: dict[str, Any]) -> None:
    """The attack: a program's ``simulate`` requests are answered by the referee, which ran in a thread
    of the server's process, so one author's tables burned the server's CPU (13.8 s in 20 s). Now the
    tables worker plays them: measured from /proc, the server's own CPU while a table of two heavy
    searchers plays is a small part of the worker's (a ratio with a wide margin, never a speed)."""
    server, folder = contest["server"], contest["folder"]
    wu = Person(server, contest["links"]["wu"])
    status, _, made = wu.call("POST", "/api/tables", {"people": 1, "bots": ["heavybot", "heavybot"], "limit": 60})
    assert status == 201, made
    ws = wu.socket(made["id"])
    first = state_of(ws, lambda s: s.get("phase") in ("busy", "move"))  # the game has started
    workers = tables_workers(server)
    assert server.proc is not None
    before = cpu_seconds(server.proc.pid), sum(cpu_seconds(p) for p in workers)
    end, sent = play(ws, random.Random(27))
    after = cpu_seconds(server.proc.pid), sum(cpu_seconds(p) for p in workers)
    ws.close()
    served, worked = after[0] - before[0], after[1] - before[1]
    assert first and end["result"] and sent > 0
    assert served + worked >= 0.2, (served, worked)  # the searchers made the referee work, somewhere (0.47 s seen)
    assert served <= 0.25 * worked, f"the server's process spent {served:.2f} s, the tables worker {worked:.2f} s"
    log = read_db(folder, tablestore.game, made["id"])[1]
    assert sum(1 for e in log if e["event"] == "fault") == 0  # the searches stayed within their limits


def test_a_table_resumes_where_it_was_after_a_kill_9_of_the_server(contest: dict[str, Any]) -> None:
    server, folder = contest["server"], contest["folder"]
    zed = Person(server, contest["links"]["zed"])
    status, _, made = zed.call("POST", "/api/tables", {"people": 1, "bots": ["annbot", "annbot"], "limit": 125})
    assert status == 201, made
    key, rng = made["id"], random.Random(30)
    ws = zed.socket(key)
    before, sent = play(ws, rng, actions=6)  # asked again after six actions: then the server dies
    assert before["phase"] == "move" and sent == 6, (sent, before["messages"], before.get("result"))
    assert read_db(folder, moves_kept, key) == 6  # each action kept before the referee acted on it
    ws.close()
    restart(server)
    ws = zed.socket(key)  # the same session, the same seat
    after = state_of(ws, lambda s: s.get("phase") == "move" and not s.get("resuming"))
    for field in ("events", "hand", "puttable", "can_draw", "can_finish"):
        assert after[field] == before[field], field  # the very position it was in
    end, _ = play(ws, rng, state=after)
    ws.close()
    assert end["result"] and end["record"] == f"/tables/{key}/game"
    assert read_db(folder, tablestore.outcome, key) == tablestore.FINISHED
    seats, log = read_db(folder, tablestore.game, key)
    assert public_prefix(before["events"], log)  # the record is the game played before and after
    assert [s["name"] for s in seats][1:] == [seats[1]["name"], f"{seats[1]['name']} (2)"]  # one name a seat
    assert [p["name"] for p in log[0]["players"]] == [s["name"] for s in seats]
    assert [p["name"] for p in before["events"][0]["players"]] == [s["name"] for s in seats]  # as the page says
    assert key not in read_db(folder, live_keys)


def test_a_table_resumes_when_its_worker_dies_under_a_running_server(contest: dict[str, Any]) -> None:
    """``kill -9`` of the tables worker alone: the seat's open socket is told the game is resuming,
    the supervisor starts another worker, and the same seat is asked the same question again."""
    server, folder = contest["server"], contest["folder"]
    ada = Person(server, contest["links"]["ada"])
    status, _, made = ada.call("POST", "/api/tables", {"people": 1, "bots": ["annbot"], "limit": 125})
    assert status == 201, made
    key, rng = made["id"], random.Random(32)
    ws = ada.socket(key)
    before, _ = play(ws, rng, actions=3)
    (worker,) = tables_workers(server)
    os.kill(worker, 9)
    state_of(ws, lambda s: bool(s.get("resuming")))  # said on the same socket, at once
    after = state_of(ws, lambda s: s.get("phase") == "move" and not s.get("resuming"))
    assert (after["events"], after["hand"]) == (before["events"], before["hand"])
    assert tables_workers(server) not in ([], [worker])
    end, _ = play(ws, rng, state=after)
    ws.close()
    assert end["result"] and read_db(folder, tablestore.outcome, key) == tablestore.FINISHED


def test_a_game_that_does_not_replay_the_same_is_recorded_as_abandoned(contest: dict[str, Any]) -> None:
    """A bot that is not deterministic (node's own Math.random) makes another game when replayed: the
    seat is told, and the game is recorded as abandoned with what was played before the restart."""
    server, folder = contest["server"], contest["folder"]
    yan = Person(server, contest["links"]["yan"])
    status, _, made = yan.call("POST", "/api/tables", {"people": 1, "bots": ["dicebot"], "limit": 125})
    assert status == 201, made
    key, rng = made["id"], random.Random(31)
    ws = yan.socket(key)
    before, _ = play(ws, rng, actions=12)  # a dozen: a replay that chose alike at 4 resumed (seen once)
    ws.close()
    restart(server)
    ws = yan.socket(key)
    told = state_of(ws, closed)
    ws.close()
    assert told["abandoned"] and told["result"] is None and told["record"] == f"/tables/{key}/game"
    assert any("recorded as abandoned" in m for m in told["messages"])
    assert read_db(folder, tablestore.outcome, key) == tablestore.ABANDONED
    _, log = read_db(folder, tablestore.game, key)
    kept = game_seen_by(log, PUBLIC)
    assert kept and [json.dumps(e, sort_keys=True) for e in kept] == [
        json.dumps(e, sort_keys=True) for e in before["events"][: len(kept)]
    ]  # what was played, up to the last action kept
    assert not any(e["event"] == "end" for e in log)
    assert told["events"] == game_seen_by(log, 0)  # the seat is shown the game as it was played (R10)
    status, _, page = yan.call("GET", "/tables")
    assert status == 200 and "abandoned" in page and f"/tables/{key}/game" in page
    status, _, viewer = yan.call("GET", f"/tables/{key}/game")
    assert status == 200 and "Restart Cup" in viewer  # the contest's name heads the viewer


def test_a_table_nobody_comes_back_to_ends_and_is_recorded(tmp_path: Path) -> None:
    """Two people sit down and go (a first move is kept: their first timeout), the server is killed,
    and neither comes back: the resumed game times their moves out (--table-move-seconds), retires
    them, and the fallback ends it; it is recorded, not dropped."""
    folder = tmp_path / "cup"
    token_of(arena("contest", "init", str(folder), "--name", "Empty Cup").stdout.splitlines()[-1])
    server = Server(folder, "--ladder-workers", "0", "--table-move-seconds", "2")
    server.start()
    try:
        links = {}
        for name in ("ada", "bo"):
            out = arena("contest", "guest", str(folder), "--name", name, "--url", server.url)
            links[name] = out.stdout.strip().rsplit(" ", 1)[1]
        ada, bo = Person(server, links["ada"]), Person(server, links["bo"])
        status, _, made = ada.call("POST", "/api/tables", {"people": 2, "bots": [], "limit": 10})
        assert status == 201, made
        key = made["id"]
        assert bo.call("POST", f"/api/tables/{key}/join", {})[0] == 200
        socks = [ada.socket(key), bo.socket(key)]
        wait_for(lambda: read_db(folder, moves_kept, key) >= 1, "a first move", 60)
        for ws in socks:
            ws.close()
        restart(server)
        wait_for(lambda: read_db(folder, tablestore.outcome, key) is not None, "the table to end", 120)
    finally:
        server.stop()
    assert read_db(folder, tablestore.outcome, key) == tablestore.FINISHED
    _, log = read_db(folder, tablestore.game, key)
    retired = {e["seat"] for e in log if e["event"] == "fault" and e["kind"] == "retired"}
    assert retired == {0, 1} and any(e["event"] == "end" for e in log)
    assert read_db(folder, live_keys) == []


#: Where the screenshots go (for a person to look at); the test's temporary folder by default.
SHOTS = os.environ.get("ARENA_SHOTS")
SETTLED = (
    "() => ['move', 'closed'].includes(document.body.dataset.phase) && "
    "!document.querySelector('#table').dataset.animating"
)
#: One click of the seat, drawing whenever it may (a hand that grows), else putting or finishing.
GROW = """() => {
  const suits = document.getElementById('suits');
  if (!suits.hidden) { suits.querySelectorAll('.suit')[1].click(); return 'suit'; }
  const draw = document.getElementById('draw'), finish = document.getElementById('finish');
  if (!draw.disabled) { draw.click(); return 'draw'; }
  if (!finish.disabled) { finish.click(); return 'finish'; }
  const playable = document.querySelector('.seat.you .hand .card.playable');
  if (playable) { playable.click(); return suits.hidden ? 'put' : 'jack'; }
  return 'wait';
}"""
#: One click of the seat, putting whenever it may (a game that moves on).
STEP = seat_step(1)
#: What the person cannot see of their own hand: each card whose rank is under another card (the page
#: is asked what is on top at the rank), and each playable card that another card touches within its
#: outline (a card's box less than 1 px from it: no line of the outline shows there).
HIDDEN = """() => {
  const problems = [];
  const mine = Array.from(document.querySelectorAll('.seat.you .hand .card'));
  const boxes = mine.map((c) => c.getBoundingClientRect());
  mine.forEach((c, i) => {
    const r = c.querySelector('.rank').getBoundingClientRect();
    const on = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
    if (!on || on.closest('.card') !== c) problems.push('rank of ' + c.dataset.card);
    if (!c.classList.contains('playable')) return;
    const b = boxes[i];
    boxes.forEach((o, j) => {
      if (j !== i && o.left < b.right + 1 && o.right > b.left - 1 && o.top < b.bottom + 1 && o.bottom > b.top - 1)
        problems.push('outline of ' + c.dataset.card);
    });
  });
  return problems;
}"""


def click_until(page: Any, script: str, done: Any, bound: int = 400) -> None:
    """Click as ``script`` says, waiting for the table's answer each time, until ``done(page)``."""
    for _ in range(bound):
        page.wait_for_function(SETTLED, timeout=60_000)
        if page.get_attribute("body", "data-phase") != "move" or done(page):
            return
        version = page.get_attribute("body", "data-version")
        if page.evaluate(script) not in ("wait", "jack"):
            page.wait_for_function(f"() => document.body.dataset.version !== '{version}'", timeout=60_000)


class Partner(threading.Thread):
    """The other person at the table, scripted over its websocket: it draws whenever it may (so the
    round goes on) until ``grow`` is cleared, then puts whenever it may; it comes back by itself
    after the server restarts."""

    def __init__(self, person: Person, key: str) -> None:
        super().__init__(daemon=True)
        self.person, self.key = person, key
        self.grow, self.stop = threading.Event(), threading.Event()
        self.grow.set()
        self.rng = random.Random(5)

    def answer(self, st: dict[str, Any]) -> dict[str, Any]:
        if self.grow.is_set() and st["can_draw"]:
            return {"action": "draw"}
        if self.grow.is_set() and st["can_finish"]:
            return {"action": "finish"}
        return a_move(st, self.rng)

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                ws = self.person.socket(self.key)
            except Exception:  # noqa: BLE001 - the server is restarting: try again
                self.stop.wait(0.5)
                continue
            try:
                while not self.stop.is_set():
                    try:
                        st = json.loads(ws.recv(timeout=0.5))
                    except TimeoutError:
                        continue
                    if st.get("phase") == "closed":
                        return
                    if st.get("phase") == "move" and not st.get("resuming"):
                        time.sleep(0.1)  # a person's pace: under the server's 60 messages in 10 s
                        ws.send(json.dumps(self.answer(st)))
            except Exception:  # noqa: BLE001 - the connection dropped: come back
                self.stop.wait(0.5)
            finally:
                ws.close()


def test_a_seat_in_chromium_through_a_kill_9_of_the_server(
    browser: Any, contest: dict[str, Any], tmp_path: Path
) -> None:
    """In Chromium, as a person plays: the Leave dialog says what happens; a hand of 8 cards shows
    every rank and playable outline (1280x800 and 390x844); a kill -9 of the server leaves nothing to
    click and says so; after the restart the same seat and hand come back and the game plays to its
    end; the game-over page links back to the tables; /tables names the guest and lists the game
    with its date and result. Screenshots at each step (ARENA_SHOTS=DIR keeps them)."""
    server: Server = contest["server"]
    shots = Path(SHOTS) if SHOTS else tmp_path
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(contest["links"]["kim"])
    page.wait_for_url("**/tables")
    assert page.text_content("#guest") == "guest-kim" and page.locator("header a[href='/login']").count() == 0
    page.fill("#people", "2")
    page.select_option("select[aria-label='bot 1']", "")  # kim and one more person (who draws: the round goes on)
    page.fill("#limit", "30")
    page.click("#open-table")
    page.wait_for_url(lambda url: "/tables/" in url)
    table_url = page.url
    key = table_url.rsplit("/", 1)[1]
    lee = Person(server, contest["links"]["lee"])
    assert lee.call("POST", f"/api/tables/{key}/join", {})[0] == 200
    partner = Partner(lee, key)
    partner.start()
    try:
        page.goto(table_url + "?speed=100")
        page.wait_for_function(SETTLED, timeout=60_000)
        said: list[str] = []
        page.once("dialog", lambda d: (said.append(d.message), d.dismiss()))
        page.click("#leave")
        assert said and "fallback plays your seat" in said[0] and "stops" not in said[0]

        click_until(page, GROW, lambda p: p.locator(".seat.you .hand .card").count() >= 8)
        assert page.locator(".seat.you .hand .card").count() >= 8, (
            page.text_content("#status"),
            page.text_content("#messages"),
        )
        assert page.get_attribute("body", "data-phase") == "move"
        page.screenshot(path=str(shots / "table-hand-1280.png"))
        assert (hidden := page.evaluate(HIDDEN)) == [], f"at 1280x800: {hidden}"
        phone = browser.new_context(viewport={"width": 390, "height": 844})
        phone.add_cookies(page.context.cookies())
        small = phone.new_page()
        small.goto(table_url + "?speed=100")
        small.wait_for_function(SETTLED, timeout=60_000)
        assert (hidden := small.evaluate(HIDDEN)) == [], f"at 390x844: {hidden}"
        small.screenshot(path=str(shots / "table-hand-390.png"), full_page=True)
        phone.close()
        page.goto(table_url + "?speed=100")  # the newest page holds the seat
        page.wait_for_function(SETTLED, timeout=60_000)
        hand = page.locator(".seat.you .hand .card").all_text_contents()

        workers = server.workers()
        server.kill9()  # the page sees its connection drop: nothing to click, and it says so
        page.wait_for_function("() => document.body.dataset.offline === '1'", timeout=60_000)
        assert page.is_disabled("#draw") and page.is_disabled("#finish")
        assert page.locator(".card.playable, .card.clickable").count() == 0
        assert "connection lost" in (page.text_content("#status") or "")
        page.screenshot(path=str(shots / "table-restart-1280.png"))
        wait_for(lambda: not any(Path(f"/proc/{p}").exists() for p in workers), "the workers to see the server is gone")
        server.start()
        page.wait_for_function(
            "() => document.body.dataset.offline !== '1' && document.body.dataset.phase === 'move'", timeout=120_000
        )
        page.wait_for_function(SETTLED, timeout=60_000)
        assert page.locator(".seat.you .hand .card").all_text_contents() == hand  # the same seat, the same hand
        assert page.text_content("#status") == "your move"
        page.screenshot(path=str(shots / "table-resumed-1280.png"))

        partner.grow.clear()  # now both put: the game goes to its end
        click_until(page, STEP, lambda p: False)
        page.wait_for_function("() => document.body.dataset.phase === 'closed'", timeout=120_000)
        page.wait_for_function(SETTLED, timeout=60_000)
    finally:
        partner.stop.set()
        partner.join(timeout=30)
    assert "game over: you placed" in (page.text_content("#status") or "")
    assert page.get_attribute("#back", "href") == "/tables" and page.is_visible("#record")
    assert page.is_hidden("#leave") and page.is_disabled("#draw")
    page.screenshot(path=str(shots / "table-over-1280.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(shots / "table-over-390.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.click("#back")
    page.wait_for_url("**/tables")
    row = page.locator(f"tr[data-game='{key}']")
    assert row.count() == 1 and "UTC" in row.text_content() and "1. " in row.text_content()
    page.screenshot(path=str(shots / "tables-1280.png"), full_page=True)
    page.close()
    # the connections refused while the server was down are the only errors the page met
    assert [e for e in errors if "ERR_CONNECTION_REFUSED" not in e] == []
