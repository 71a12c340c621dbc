"""The contest server in Chromium (issue 21, item 8): an author signs in and uploads through the form,
the leaderboard updates live over its websocket, the organiser approves and rejects on the desk
(a rejected version leaves the ladder); no console error; screenshots at desktop and phone sizes.
The final run from the desk needs no browser: tests/server/test_server_final.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support.server import Server, arena, bot_file, token_of, wait_for

pytestmark = pytest.mark.long
#: Where the screenshots go (for a person to look at); the test's temporary folder by default.
SHOTS = os.environ.get("ARENA_SHOTS")


def test_upload_by_form_live_leaderboard_and_the_desk(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    organiser = token_of(arena("contest", "init", str(folder), "--name", "Browser Cup").stdout.splitlines()[-1])
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    ben = token_of(arena("contest", "invite", str(folder), "ben").stdout)
    server = Server(folder, "--check-workers", "2")
    server.start()
    shots = Path(SHOTS) if SHOTS else tmp_path
    try:  # ben uploads by the API (`arena submit --server`: tests/server/test_server.py), checked while ann signs in
        upload = bot_file(tmp_path, "benbot").read_bytes()
        sent = server.request("POST", "/api/submissions?name=benbot.py", upload, {"Authorization": f"Bearer {ben}"})
        assert sent[0] == 202, sent
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/login")
        page.fill("#token", ann)
        page.click("button[type=submit]")
        page.wait_for_url("**/upload")
        page.set_input_files("#bot", str(bot_file(tmp_path, "annbot", "heuristic")))
        page.click("#send")
        page.wait_for_url("**/submissions/*")
        page.wait_for_selector("#status:text('clean')", timeout=120_000)
        if SHOTS:  # for a person to look at (ARENA_SHOTS=DIR); they cost CPU
            page.screenshot(path=str(shots / "server-submission-1280.png"))

        page.goto(server.url + "/")
        page.wait_for_selector("#live:text('live')")
        row = page.locator("tr[data-bot=annbot]")
        row.wait_for()
        first = int(page.text_content("#games") or "0")
        # the page is not reloaded: the websocket brings the new games
        wait_for(lambda: int(page.text_content("#games") or "0") > first + 2, "the live leaderboard to count new games")
        # the rows the socket rebuilt: the two authors' bots and the house bots, marked and never an author's
        assert page.locator("tr[data-bot]").count() == 4
        ranks = [
            page.get_attribute(f"tr[data-bot={b}]", "data-rank") for b in ("annbot", "benbot", "random", "heuristic")
        ]
        # ranked 1 to 4; equal ratings share a rank (1, 1, 3, 4), as the leaderboard shows ties
        assert "1" in ranks and all(r in ("1", "2", "3", "4") for r in ranks), ranks
        for bot in ("random", "heuristic"):
            assert page.get_attribute(f"tr[data-bot={bot}]", "data-house") == "1"
            assert "house bot" in (page.text_content(f"tr[data-bot={bot}]") or "")
        assert page.get_attribute("tr[data-bot=annbot]", "data-house") is None
        if SHOTS:
            page.screenshot(path=str(shots / "server-leaderboard-1280.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        if SHOTS:
            page.screenshot(path=str(shots / "server-leaderboard-390.png"), full_page=True)
        page.set_viewport_size({"width": 1280, "height": 800})
        page.click("tr[data-bot=annbot] a")
        page.wait_for_selector("svg.chart polyline")
        if SHOTS:
            page.screenshot(path=str(shots / "server-bot-1280.png"), full_page=True)
        page.click("table a[href^='/games/']")
        page.wait_for_load_state()

        org = browser.new_page(viewport={"width": 1280, "height": 800})
        org.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        org.on("pageerror", lambda e: errors.append(str(e)))
        org.goto(server.url + "/login")
        org.fill("#token", organiser)
        org.click("button[type=submit]")
        org.wait_for_url("**/desk")
        org.click("a[href='/desk/3']")  # ben's (1 and 2 are the house bots, approved when added)
        org.wait_for_selector("pre.code .ln")
        org.click("button[value=approved]")
        org.wait_for_selector("#review:text('approved')")
        org.goto(server.url + "/desk/4")
        org.fill("#comment", "obscure code: please explain the <script> trick")
        org.click("button[value=rejected]")
        org.wait_for_selector("#review:text('rejected')")
        if SHOTS:
            org.screenshot(path=str(shots / "server-review-1280.png"), full_page=True)
        org.set_viewport_size({"width": 390, "height": 844})
        if SHOTS:
            org.screenshot(path=str(shots / "server-review-390.png"), full_page=True)
        org.set_viewport_size({"width": 1280, "height": 800})
        # the rejected version leaves the ladder, live on the author's open page
        page.goto(server.url + "/")
        page.locator("tr[data-bot=annbot]").wait_for(state="detached", timeout=30_000)
        bots = {"benbot", "random", "heuristic"}
        wait_for(lambda: set(b["bot"] for b in server.get("/api/leaderboard")[1]["bots"]) == bots, "the reject")
        page.goto(server.url + "/bots/annbot")
        assert "obscure code: please explain the <script> trick" in page.text_content("main")
        org.goto(server.url + "/desk")  # (the final, run from the desk: tests/server/test_server_final.py)
        if SHOTS:
            org.screenshot(path=str(shots / "server-desk-1280.png"), full_page=True)
        assert errors == []
    finally:
        server.stop()
