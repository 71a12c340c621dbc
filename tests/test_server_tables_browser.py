"""A network table in Chromium (issue 21, item 8): a guest opens the organiser's guest link, opens a
table against a bot of the ladder, plays it to the end by clicking (a reload in the middle comes back
to the same seat), and opens the game's record in the viewer; no console error; screenshots at
desktop and phone sizes."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server_helpers import Server, arena, bot_file, token_of, wait_for

pytestmark = pytest.mark.long
CHROMIUM = "/usr/bin/chromium"
SHOTS = os.environ.get("ARENA_SHOTS")

#: One click of whatever the seat may do now (the suit of a jack, a playable card, finish, draw).
STEP = """() => {
  const suits = document.getElementById('suits');
  if (!suits.hidden) { suits.querySelectorAll('.suit')[1].click(); return 'suit'; }
  const playable = document.querySelector('.seat.you .hand .card.playable');
  if (playable) { playable.click(); return suits.hidden ? 'put' : 'jack'; }
  const finish = document.getElementById('finish'), draw = document.getElementById('draw');
  if (!finish.disabled) { finish.click(); return 'finish'; }
  if (!draw.disabled) { draw.click(); return 'draw'; }
  return 'wait';
}"""
SETTLED = (
    "() => ['move', 'closed'].includes(document.body.dataset.phase) && "
    "!document.querySelector('#table').dataset.animating"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def test_a_guest_plays_a_network_table_to_the_end_by_clicking(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    arena("contest", "init", str(folder), "--name", "Table Cup")
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    server = Server(folder)
    server.start()
    shots = Path(SHOTS) if SHOTS else tmp_path
    try:
        done = arena("submit", str(bot_file(tmp_path, "annbot", "random")), "--server", server.url, "--token", ann)
        assert done.returncode == 0, done.stderr
        wait_for(lambda: any(b["bot"] == "annbot" for b in server.get("/api/leaderboard")[1]["bots"]), "the ladder")
        link = arena("contest", "guest", str(folder), "--name", "kim", "--url", server.url).stdout.split()[-1]
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(link)
        page.wait_for_url("**/tables")
        assert "guest-kim" in page.text_content("#open")
        page.fill("#limit", "10")
        page.screenshot(path=str(shots / "tables-1280.png"), full_page=True)
        page.click("#open-table")
        page.wait_for_url(re.compile(r".*/tables/[\w-]+$"))
        table_url = page.url
        page.goto(table_url + "?speed=100")
        clicks, reloaded = 0, False
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            page.wait_for_function(SETTLED, timeout=60_000)
            if page.get_attribute("body", "data-phase") != "move":
                break
            version = page.get_attribute("body", "data-version")
            if clicks == 3 and not reloaded:  # the person drops and comes back: the same seat, the same view
                hand = page.locator(".seat.you .hand .card").count()
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
            page.wait_for_function(f"() => document.body.dataset.version !== '{version}'", timeout=60_000)
        page.wait_for_function("() => document.body.dataset.phase === 'closed'", timeout=60_000)
        page.wait_for_selector("#record:not([hidden])")
        assert "over" in (page.text_content("#status") or "")
        page.screenshot(path=str(shots / "table-over-1280.png"))
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=str(shots / "table-over-390.png"), full_page=True)
        page.set_viewport_size({"width": 1280, "height": 800})
        page.click("#record")
        page.wait_for_url("**/game")
        page.wait_for_selector("#table .seat")
        page.screenshot(path=str(shots / "table-record-1280.png"))
        page.goto(server.url + "/tables")
        assert page.locator("a[href$='/game']").count() == 1
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=str(shots / "tables-390.png"), full_page=True)
        assert reloaded and clicks > 3
        assert errors == []
    finally:
        server.stop()
