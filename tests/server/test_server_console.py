"""The organiser's console on the desk (issue 30, item 3): invite an author (the token shown once),
disable and enable one, pause and resume the ladder, and the server's health (the check queue, the
workers and their restarts, games a minute, check times, the disk against its budget, the last
hour's errors and log); every form needs the organiser's session and the desk's CSRF token. Then the
same in Chromium at desktop and phone sizes, with screenshots."""

from __future__ import annotations

import os
import re
import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import DESKTOP, PHONE
from support.server import Server, arena, bot_file, token_of, wait_for

from arena.server.contest import house
from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.ladder import pace
from arena.server.store import database as store
from arena.server.store import events

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

#: Where the screenshots go (for a person to look at); the test's temporary folder by default.
SHOTS = os.environ.get("ARENA_SHOTS")
FORMS = (
    ("/desk/ladder", {"paused": "1"}),
    ("/desk/invite", {"name": "mallory"}),
    ("/desk/authors", {"name": "ann", "action": "disable"}),
)


def csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found
    return found.group(1)


@pytest.fixture
def cup(tmp_path: Path) -> Iterator[dict[str, Any]]:
    folder = tmp_path / "cup"
    organiser = store.init_contest(folder, "Console Cup")
    db = store.open_db(folder)
    ann = store.invite(db, "ann")
    events.say(db, "ladder worker (pid 9) was killed (SIGKILL); started again as pid 10 (restart 1)", "error")
    db.close()
    app = create_app(ServerSettings(folder, workers=False, disk_budget=50_000_000))
    with TestClient(app) as client:
        yield {"folder": folder, "client": client, "organiser": organiser, "ann": ann}


def sign_in(client: TestClient, token: str) -> str:
    client.post("/login", data={"token": token, "csrf": csrf(client.get("/login").text)})
    return csrf(client.get("/upload" if token.startswith("a") else "/desk").text)


def test_the_console_shows_the_servers_health(cup: dict[str, Any]) -> None:
    client = cup["client"]
    db = store.open_db(cup["folder"])
    house.add(db, ["random"])  # the house bots' row is no author: the console listed it, "disabled"
    db.close()
    sign_in(client, cup["organiser"])
    page = client.get("/desk").text
    assert re.search(r'id="checks-waiting">0<', page)
    assert re.search(r'id="disk">[0-9.]+ [KM]B of <b>50 MB</b> \(\d+%\)', page)
    assert re.search(r'id="errors" class="bad">1 in the last hour', page)  # the worker restart logged above
    assert "started again as pid 10" in page
    assert "at most 120 games per bot an hour (fewer as ratings settle)" in page
    assert 'data-author="ann"' in page and "No worker runs with this server" in page
    assert 'data-author="(house)"' not in page


def test_the_organiser_invites_an_author_whose_token_is_shown_once(cup: dict[str, Any]) -> None:
    client = cup["client"]
    token = sign_in(client, cup["organiser"])
    answer = client.post("/desk/invite", data={"csrf": token, "name": "zoe"})
    shown = re.search(r'<pre class="code" id="token">(a\d+\.[\w-]+)</pre>', answer.text)
    assert answer.status_code == 200 and shown
    db = store.open_db(cup["folder"])
    try:
        assert store.who(db, shown.group(1)) == ("author", 2)  # the token works
        assert shown.group(1) not in str(db.execute("SELECT * FROM authors").fetchall())  # kept as a hash only
    finally:
        db.close()
    assert shown.group(1) not in client.get("/desk").text  # shown once
    again = client.post("/desk/invite", data={"csrf": token, "name": "ZOE"}, headers={"Accept": "text/html"})
    assert again.status_code == 409 and "exists already" in again.text
    bad = client.post("/desk/invite", data={"csrf": token, "name": "<b>x"}, headers={"Accept": "text/html"})
    assert bad.status_code == 400


def test_the_organiser_disables_and_enables_an_author_and_pauses_the_ladder(cup: dict[str, Any]) -> None:
    client = cup["client"]
    token = sign_in(client, cup["organiser"])
    assert client.post("/desk/authors", data={"csrf": token, "name": "ann", "action": "disable"}).status_code == 200
    db = store.open_db(cup["folder"])
    try:
        assert store.who(db, cup["ann"]) is None  # her token stops signing in
        assert 'data-author="ann"><td>ann <span class="bad">disabled</span>' in client.get("/desk").text
        client.post("/desk/authors", data={"csrf": token, "name": "ann", "action": "enable"})
        assert store.who(db, cup["ann"]) == ("author", 1)
        nobody = client.post("/desk/authors", data={"csrf": token, "name": "nobody", "action": "disable"})
        assert nobody.status_code == 404
        assert client.post("/desk/ladder", data={"csrf": token, "paused": "1"}).status_code == 200
        assert pace.paused(db) and 'id="resume"' in client.get("/desk").text
        client.post("/desk/ladder", data={"csrf": token, "paused": "0"})
        assert not pace.paused(db) and 'id="pause"' in client.get("/desk").text
        said = [e["text"] for e in events.recent(db, 0)]
        assert "author ann disabled from the desk" in said and "author ann enabled from the desk" in said
    finally:
        db.close()


@pytest.mark.parametrize(("path", "fields"), FORMS)
def test_every_console_form_needs_the_organiser_and_the_csrf_token(
    cup: dict[str, Any], path: str, fields: dict[str, str]
) -> None:
    client = cup["client"]
    assert client.post(path, data={**fields, "csrf": "x"}).status_code == 401  # signed out
    author_token = sign_in(client, cup["ann"])
    assert client.post(path, data={**fields, "csrf": author_token}).status_code == 403  # an author
    assert client.get("/desk").status_code == 403
    client.post("/logout", data={"csrf": author_token})
    token = sign_in(client, cup["organiser"])
    assert client.post(path, data=fields).status_code == 403  # no CSRF token
    assert client.post(path, data={**fields, "csrf": token[::-1]}).status_code == 403  # a wrong one
    db = store.open_db(cup["folder"])
    try:  # nothing was done
        assert not pace.paused(db)
        assert [r[0] for r in db.execute("SELECT name FROM authors")] == ["ann"]
        assert store.who(db, cup["ann"]) == ("author", 1)
    finally:
        db.close()


@pytest.mark.long
def test_the_console_in_chromium(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    organiser = token_of(arena("contest", "init", str(folder), "--name", "Console Cup").stdout.splitlines()[-1])
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    bob = token_of(arena("contest", "invite", str(folder), "bob").stdout)
    server = Server(folder, "--pace", "600", "--disk-budget", "200M")
    server.start()
    shots = Path(SHOTS) if SHOTS else tmp_path
    try:
        for name, token in (("annbot", ann), ("bobbot", bob)):
            assert (
                arena("submit", str(bot_file(tmp_path, name)), "--server", server.url, "--token", token).returncode == 0
            )
        wait_for(lambda: games(folder) >= 4, "the ladder to play")
        page = browser.new_page(viewport=DESKTOP)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/login")
        page.fill("#token", organiser)
        page.click("button[type=submit]")
        page.wait_for_url("**/desk")
        assert page.text_content("#ladder-state") == "Playing"
        # two check workers, two build workers, the ladder and the tables
        assert page.locator("#workers tbody tr").count() == 6
        assert "of 200 MB" in (page.text_content("#disk") or "")
        page.screenshot(path=str(shots / "console-1280.png"), full_page=True)
        page.click("#pause")
        page.wait_for_url("**/desk#ladder")
        assert page.text_content("#ladder-state") == "Paused"
        page.fill("#authors input[name=name]", "carol")
        page.click("#invite")
        token = page.text_content("#token") or ""
        assert re.fullmatch(r"a\d+\.[\w-]+", token)
        page.screenshot(path=str(shots / "console-invited-1280.png"))
        page.go_back()
        page.goto(server.url + "/desk")
        page.locator('tr[data-author="bob"] button').click()
        page.wait_for_url("**/desk#authors")
        assert "disabled" in (page.text_content('tr[data-author="bob"]') or "")
        page.set_viewport_size(PHONE)
        page.goto(server.url + "/desk")
        wide = page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= PHONE["width"], wide  # nothing off the screen's side
        page.screenshot(path=str(shots / "console-390.png"), full_page=True)
        assert errors == []
    finally:
        server.stop()


def games(folder: Path) -> int:
    with sqlite3.connect(f"file:{folder / 'contest.db'}?mode=ro", uri=True) as db:
        return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])


class Broken:
    """A leaderboard that fails as a bug would."""

    def get(self) -> None:
        raise RuntimeError("secret detail")

    def close(self) -> None:
        pass


def test_an_internal_error_counts_among_the_last_hours_errors(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    organiser = store.init_contest(folder, "Console Cup")
    with TestClient(create_app(ServerSettings(folder, workers=False)), raise_server_exceptions=False) as client:
        sign_in(client, organiser)
        assert re.search(r'id="errors" class="good">0 in the last hour', client.get("/desk").text)
        board, client.app.state.board = client.app.state.board, Broken()
        assert client.get("/").status_code == 500
        client.app.state.board = board
        page = client.get("/desk").text
    assert re.search(r'id="errors" class="bad">1 in the last hour', page)
    assert "internal error answering GET /: RuntimeError" in page and "secret detail" not in page
