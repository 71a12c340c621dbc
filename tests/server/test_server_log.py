"""The server's log (issue 30, item 3): one line for each thing that happened (a check's verdict, a
worker started or restarted, the ladder paused and resumed, the final started and published, a round
opened), and no traceback when a client goes away (a browser closing a table page, a socket dropped)."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import signal
import sqlite3
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.server import Server, arena, bot_file, token_of, wait_for

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from websockets.sync.client import connect

pytestmark = [pytest.mark.long, pytest.mark.filterwarnings("ignore:connect.. must be used:DeprecationWarning")]

#: A line of the server's log: a time, then what happened.
LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d arena: (?:(?:warning|error): )?\S.*")


class Session:
    """A signed-in person's browser, without the browser: a cookie jar, and forms with the page's CSRF token."""

    def __init__(self, server: Server, token: str | None = None, link: str | None = None) -> None:
        self.server = server
        self.jar = http.cookiejar.CookieJar()
        self.open = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar)).open
        if link is not None:
            self.get(urlsplit(link).path)
        if token is not None:
            self.post("/login", {"token": token}, "/login")

    def get(self, path: str) -> tuple[int, str]:
        request = urllib.request.Request(self.server.url + path, headers={"Accept": "text/html"})
        try:
            with self.open(request, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def post(self, path: str, fields: dict[str, str] | list[tuple[str, str]], page: str = "/desk") -> tuple[int, str]:
        found = re.search(r'name="csrf" value="([^"]+)"', self.get(page)[1])
        assert found, page
        pairs = list(fields.items()) if isinstance(fields, dict) else list(fields)
        body = urllib.parse.urlencode([*pairs, ("csrf", found.group(1))]).encode()
        request = urllib.request.Request(self.server.url + path, data=body, headers={"Accept": "text/html"})
        try:
            with self.open(request, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def cookie(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)


def events(folder: Path) -> list[str]:
    with sqlite3.connect(f"file:{folder / 'contest.db'}?mode=ro", uri=True) as db:
        return [str(t) for (t,) in db.execute("SELECT text FROM events ORDER BY id")]


def games(folder: Path) -> int:
    with sqlite3.connect(f"file:{folder / 'contest.db'}?mode=ro", uri=True) as db:
        return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])


def ladder_worker(server: Server) -> int:
    for pid in server.workers():
        if b"\0ladder\0" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
    raise AssertionError("no ladder worker")


@pytest.mark.timeout(900)
def test_the_log_says_what_happened_in_one_line_each(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    organiser = token_of(
        arena("contest", "init", str(folder), "--name", "Log Cup", "--house", "none").stdout.splitlines()[-1]
    )
    ann, bob = (token_of(arena("contest", "invite", str(folder), n).stdout) for n in ("ann", "bob"))
    broken = tmp_path / "broken.py"
    broken.write_text('class Bot:\n    name = "broken"\n    def play(self, state:\n')
    server = Server(folder)
    server.start()
    try:
        for path, token in ((bot_file(tmp_path, "annbot"), ann), (bot_file(tmp_path, "bobbot", "random"), bob)):
            done = arena("submit", str(path), "--server", server.url, "--token", token)
            assert done.returncode == 0, done.stderr
        arena("submit", str(broken), "--server", server.url, "--token", bob)
        wait_for(lambda: games(folder) >= 4, "the ladder to play")
        killed = ladder_worker(server)
        os.kill(killed, signal.SIGKILL)
        wait_for(lambda: any("started again" in e for e in events(folder)), "the ladder worker to be restarted")
        desk = Session(server, organiser)
        shown = desk.get("/desk")[1]  # the console counts the restart, and the error
        assert re.search(r'<tr data-kind="ladder">(?:(?!</tr>).)*<td class="n bad">1</td></tr>', shown, re.S), shown
        assert re.search(r'id="errors" class="bad">1 in the last hour', shown)
        assert desk.post("/desk/ladder", {"paused": "1"})[0] == 200
        wait_for(lambda: any("ladder: paused" in e for e in events(folder)), "the ladder to say it paused")
        assert arena("contest", "resume", str(folder)).returncode == 0
        wait_for(lambda: any(e == "ladder: resumed" for e in events(folder)), "the ladder to say it resumed")
        for sid in (1, 2):
            assert desk.post(f"/desk/{sid}/review", {"verdict": "approved", "comment": ""})[0] == 200
        desk.post("/desk/freeze", {"frozen": "1"})
        form = [("round", "1"), ("mode", "fixed"), ("games", "2"), ("players", "2"), ("house", "1")]
        assert desk.post("/desk/final", [*form, ("entrant", "annbot"), ("entrant", "bobbot")])[0] == 200
        wait_for(lambda: any(e.startswith("final of round 1 published") for e in events(folder)), "the final")
        done = arena("contest", "round", str(folder), "--field", "2")
        assert done.returncode == 0, done.stderr
        wait_for(
            lambda: any(e.startswith("ladder: round 2 is open") for e in events(folder)), "the ladder to see round 2"
        )
    finally:
        err = server.stop()
    said = [line for line in err.splitlines() if LINE.fullmatch(line)]
    for expected in (
        r"check worker started \(pid \d+\)",
        r"ladder worker started \(pid \d+\)",
        r"ladder: playing, no pace \(as fast as the workers play\); each version's latest 100 games kept whole",
        r"check of annbot v1 \(submission 1, by ann\): clean in \d+\.\d s",
        r"check of bobbot v1 \(submission 2, by bob\): clean in \d+\.\d s",
        r"check of broken v1 \(submission 3, by bob\): failed in \d+\.\d s: .*broken\.py.*",
        rf"error: ladder worker \(pid {killed}\) was killed \(SIGKILL\); started again as pid \d+ \(restart 1\)",
        r"ladder: paused by the organiser: no new game until it is resumed",
        r"ladder: resumed",
        r"final of round 1 started: 2 entrants \(annbot, bobbot\); tables of 2; 2 deals a table",
        r"final of round 1 published at /final/1/: 2 entrants",
        r"ladder: round 2 is open: new versions play its field under its rules",
    ):
        assert any(re.fullmatch(r".* arena: " + expected, line) for line in said), (expected, said)
    # Nothing else but these lines, the serving line and the goodbye: no traceback, no stray output.
    others = [line for line in err.splitlines() if not LINE.fullmatch(line)]
    assert all(line.startswith("arena: serving ") or line == "arena: interrupted" for line in others), others


def test_a_client_that_goes_away_leaves_no_traceback(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    token_of(arena("contest", "init", str(folder)).stdout.splitlines()[-1])
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    server = Server(folder, "--ladder-workers", "0")
    server.start()
    try:
        done = arena("submit", str(bot_file(tmp_path, "annbot", "random")), "--server", server.url, "--token", ann)
        assert done.returncode == 0, done.stderr
        links = [
            arena("contest", "guest", str(folder), "--name", n, "--url", server.url).stdout.strip().rsplit(" ", 1)[1]
            for n in ("zed", "yan")
        ]
        # A browser opens a table page (its socket connects), then the tab closes.
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(links[0])
        page.wait_for_url("**/tables")
        page.click("#open-table")
        page.wait_for_url(re.compile(r".*/tables/[\w-]+$"))
        page.wait_for_function("() => document.body.dataset.phase !== undefined", timeout=60_000)
        page.goto(server.url + "/")  # the live leaderboard's socket too
        page.wait_for_timeout(500)
        page.close()
        # A script's socket dropped without a closing handshake, mid-game.
        person = Session(server, link=links[1])
        opened = urllib.request.Request(
            server.url + "/api/tables",
            data=json.dumps({"people": 1, "bots": ["annbot"]}).encode(),
            headers={"Content-Type": "application/json", "Origin": server.url, "Cookie": person.cookie()},
        )
        with urllib.request.urlopen(opened, timeout=30) as r:
            key = json.loads(r.read())["id"]
        ws = connect(
            f"ws://127.0.0.1:{server.port}/ws/tables/{key}",
            additional_headers={"Cookie": person.cookie()},
            origin=server.url,  # type: ignore[arg-type]
        )
        ws.recv(timeout=30)
        ws.socket.close()  # gone, no close frame
        wait_for(lambda: server.get("/api/leaderboard")[0] == 200, "the server to answer")
        time.sleep(2)  # the server notices both
    finally:
        err = server.stop()
    assert "Traceback" not in err and "WebSocketDisconnect" not in err, err
