"""The site's pages for people, in Chromium (issue 30, item 4): refusals as pages with a way on,
the upload page when submissions are frozen, the leaderboard's empty state, and the leaderboard
on a phone (rank, name, rating and games in view, rows one line high). A server started as
users start it; the ladder's games are played here (no workers), so the page follows them live.
Screenshots at desktop and phone sizes go to ARENA_SHOTS=DIR for a person to look at."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from support.browser import DESKTOP, PHONE
from support.server import ROOT, Server, arena, token_of

from arena.server.ladder.matchmaker import LadderPlayer
from arena.server.store import database as store

pytestmark = pytest.mark.long
SHOTS = os.environ.get("ARENA_SHOTS")
BOT = (ROOT / "bots" / "greedy.py").read_text()


def shot(page: Any, name: str) -> None:
    if SHOTS:  # for a person to look at; they cost CPU
        for size, label in ((DESKTOP, "1280"), (PHONE, "390")):
            page.set_viewport_size(size)
            page.screenshot(path=str(Path(SHOTS) / f"{name}-{label}.png"), full_page=True)
        page.set_viewport_size(DESKTOP)


def refusal(page: Any, status: int) -> str:
    """The refusal page's text, checked: in the layout, with its status and a way on."""
    assert page.locator("header.bar h1").text_content() == "Pages Cup"
    assert page.get_attribute("#refusal", "data-status") == str(status)
    assert page.locator("#next a").count() >= 1
    return str(page.text_content("#refusal"))


def columns_in_view(page: Any) -> list[str]:
    """What is wrong with the leaderboard's rows at this size: a column of rank, name, rating or
    games out of the viewport or hidden, or a row taller than one line of text."""
    return list(
        page.evaluate(
            """() => {
        const bad = [], width = window.innerWidth;
        for (const row of document.querySelectorAll('#board tr')) {
          for (const name of ['rank', 'bot', 'rating', 'games']) {
            const box = row.querySelector('td.' + name).getBoundingClientRect();
            if (box.width === 0 || box.left < 0 || box.right > width) {
              bad.push(name + ' out of view: ' + box.left + '-' + box.right);
            }
          }
          const line = parseFloat(getComputedStyle(row.querySelector('td.bot')).lineHeight);
          const height = row.getBoundingClientRect().height;
          if (height >= 2 * line) bad.push('a row ' + height + ' px high (a line is ' + line + ')');
        }
        if (document.documentElement.scrollWidth > width) bad.push('the page scrolls sideways');
        return bad;
    }"""
        )
    )


def test_refusals_frozen_uploads_and_the_leaderboard_in_chromium(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    arena("contest", "init", str(folder), "--name", "Pages Cup", "--house", "none")
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    ben = token_of(arena("contest", "invite", str(folder), "ben").stdout)
    server = Server(folder, "--ladder-workers", "0", "--check-workers", "0")
    server.start()
    errors: list[str] = []
    try:
        page = browser.new_page(viewport=DESKTOP)
        page.on("pageerror", lambda e: errors.append(str(e)))
        # an empty leaderboard says so, and how a bot gets there
        page.goto(server.url + "/")
        assert page.is_visible("#empty") and not page.is_visible("#standings")
        assert "No bot has played yet" in str(page.text_content("#empty"))
        page.click("#empty a[href='/login']")
        # a wrong token: the form again, saying so
        page.fill("#token", "a1.not-the-token")
        page.click("button[type=submit]")
        page.wait_for_selector("#refused")
        assert "That token is not valid here" in str(page.text_content("#refused"))
        shot(page, "pages-login-refused")
        # pages that are not there, or not yours: a page in the layout, and the way back
        for path in ("/bots/nosuch", "/games/nosuch", "/submissions/1", "/nowhere"):
            answer = page.goto(server.url + path)
            assert answer is not None and answer.status in (401, 404)
            refusal(page, answer.status)
        shot(page, "pages-404")
        page.set_viewport_size(PHONE)  # an address past the screen's width wraps: nothing scrolls sideways
        page.goto(server.url + "/nowhere/" + "x" * 300)
        assert "There is no page at /nowhere/xxx" in refusal(page, 404)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.set_viewport_size(DESKTOP)
        page.goto(server.url + "/upload")
        assert "Sign in" in refusal(page, 401)
        shot(page, "pages-401")
        page.click("#next a.first")  # the sign-in link, followed
        page.fill("#token", ann)
        page.click("button[type=submit]")
        page.wait_for_url("**/upload")
        # a file past the limit, through the form: a page saying so, and back to the form
        big = tmp_path / "big.py"
        big.write_text("#" * (600 * 1024))
        page.set_input_files("#bot", str(big))
        with page.expect_navigation():
            page.click("#send")
        assert "larger than" in refusal(page, 413)
        shot(page, "pages-413")
        page.click("#next a[href='/upload']")
        page.wait_for_url("**/upload")
        # frozen: the page says so and the form cannot be sent
        db = store.open_db(folder)
        store.set_setting(db, "frozen", "1")
        page.reload()
        assert page.is_visible("#frozen") and page.is_disabled("#bot") and page.is_disabled("#send")
        shot(page, "pages-upload-frozen")
        store.set_setting(db, "frozen", "0")
        # the author's leaderboard: empty, with the upload link; then live rows as games are played
        page.goto(server.url + "/")
        assert page.is_visible("#empty a[href='/upload']")
        page.wait_for_selector("#live:text('live')")
        shot(page, "pages-leaderboard-empty")
        for token, name in ((ann, "annbot"), (ben, "benbot"), (ann, "carlbot")):
            author = int(token.split(".")[0][1:])
            sid = store.add_submission(db, author, name, BOT.replace('"greedy"', f'"{name}"').encode())
            store.finish_check(db, sid, {"clean": True}, None)
        player = LadderPlayer(db)
        try:
            while store.games_count(db) < 6:
                player.play_block(random.Random(store.games_count(db)))
        finally:
            player.close()
        page.wait_for_selector("tr[data-bot=carlbot]")  # no reload: the socket brought them
        assert not page.is_visible("#empty") and page.is_visible("#standings")
        assert columns_in_view(page) == []
        page.set_viewport_size(PHONE)
        assert columns_in_view(page) == []
        shot(page, "pages-leaderboard")
        db.close()
        assert errors == []
    finally:
        server.stop()
