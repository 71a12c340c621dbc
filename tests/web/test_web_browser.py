"""The viewer, the report and the browser seat in a real browser (Playwright driving
Debian's Chromium). These tests fail, never skip, when the browser is missing:
`.ci/run` installs it. Screenshots are kept in tests/artifacts/ (gitignored)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.browser import DESKTOP, PHONE, seat_step
from support.cli import arena_here as arena

from arena import play as play_match
from arena.records.files import read_games

ARTIFACTS = Path(__file__).parent / "artifacts"


class Page:
    """A page that records console errors and uncaught exceptions."""

    def __init__(self, browser, viewport=DESKTOP):
        self.context = browser.new_context(viewport=viewport)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def shot(self, name: str, full: bool = False) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / name), full_page=full)

    def scores(self) -> dict[int, int]:
        return {
            int(s): int(p)
            for s, p in self.page.eval_on_selector_all(
                "[data-seat][data-score]", "els => els.map(e => [e.dataset.seat, e.dataset.score])"
            )
        }

    def close(self) -> None:
        assert self.errors == []
        self.context.close()


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Records of games at 2, 4 and 6 seats (several games each)."""
    folder = tmp_path_factory.mktemp("records")
    out = {}
    for bots in (
        ["greedy", "random"],
        ["greedy", "heuristic", "random", "greedy"],
        ["random", "greedy", "heuristic", "random", "greedy", "heuristic"],
    ):
        path = folder / f"{len(bots)}p.jsonl"
        play_match(bots, games=3, seed=len(bots), record_file=str(path), trusted=True)
        out[len(bots)] = path
    return out


def test_viewer_end_shows_final_scores_for_every_game_and_table_size(browser, records, tmp_path):
    for seats, record in records.items():
        html = tmp_path / f"{seats}.html"
        done = arena("view", str(record), "--out", str(html), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        page = Page(browser)
        for events in read_games(record):
            gid, end = events[0]["game"], events[-1]
            page.page.goto(f"{html.as_uri()}#game={gid}&step=end")
            page.page.wait_for_function(f"document.querySelectorAll('[data-score]').length === {seats}")
            assert page.scores() == dict(enumerate(end["scores"])), (seats, gid)
            # the result box names every place
            assert page.page.locator(".result tr").count() == seats + 1
        page.shot(f"viewer-{seats}p-end.png")
        page.close()


def test_viewer_controls_keys_and_url_state(browser, records, tmp_path):
    html = tmp_path / "v.html"
    assert arena("view", str(records[4]), "--out", str(html), cwd=tmp_path).returncode == 0
    events = next(read_games(records[4]))
    page = Page(browser)
    p = page.page
    p.goto(f"{html.as_uri()}#game=1&step=0")
    p.wait_for_selector(".seat")
    assert p.evaluate("location.hash") == "#game=1&step=0"
    p.keyboard.press("ArrowRight")
    assert p.evaluate("location.hash") == "#game=1&step=1"  # one action: the deal
    p.keyboard.press("Shift+ArrowRight")
    finish = next(i for i, e in enumerate(events) if e["event"] == "finish")
    assert p.evaluate("location.hash") == f"#game=1&step={finish}"  # one move: to its finish
    p.keyboard.press("ArrowLeft")
    assert p.evaluate("location.hash") == f"#game=1&step={finish - 1}"
    p.keyboard.press("PageDown")  # the next round's deal
    second = [i for i, e in enumerate(events) if e["event"] == "deal"][1]
    assert p.evaluate("location.hash") == f"#game=1&step={second}"
    assert p.locator(".round-info").inner_text() == "Round 2"
    p.keyboard.press("End")
    assert p.evaluate("location.hash") == "#game=1&step=end"
    p.click("#first")
    p.select_option("#speed", "16")
    p.click("#play")
    p.wait_for_function("!location.hash.endsWith('step=0')")
    p.click("#play")  # pause
    paused = p.evaluate("location.hash")
    p.wait_for_timeout(200)
    assert p.evaluate("location.hash") == paused
    p.click("#games li:nth-child(3) a")  # the game list
    p.wait_for_function("location.hash.startsWith('#game=3&')")
    page.shot("viewer-4p-desktop.png")
    page.close()
    phone = Page(browser, PHONE)
    phone.page.goto(f"{html.as_uri()}#game=1&step=60")
    phone.page.wait_for_selector(".seat")
    phone.shot("viewer-4p-phone.png", full=True)
    # on a phone the seats stack: none is wider than the screen
    widths = phone.page.eval_on_selector_all(".seat", "els => els.map(e => e.getBoundingClientRect().right)")
    assert max(widths) <= PHONE["width"]
    phone.close()


def test_hostile_names_and_say_text_stay_text(browser, records, tmp_path):
    """`</script>` and markup in names, say lines and fault details cannot run in the viewer."""
    events = next(read_games(records[2]))
    evil = '</script><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
    events[0]["players"][1]["name"] = evil
    events.insert(3, {"event": "say", "seat": 1, "text": evil + " <!-- \u2028"})
    events.insert(4, {"event": "fault", "seat": 1, "kind": "exception", "detail": evil})
    record = tmp_path / "evil.jsonl"
    record.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    html = tmp_path / "evil.html"
    assert arena("view", str(record), "--out", str(html), cwd=tmp_path).returncode == 0
    text = html.read_text(encoding="utf-8")
    assert text.count("</script>") == 2  # the data's element and the script's, nothing else
    page = Page(browser)
    page.page.goto(f"{html.as_uri()}#game=1&step=4")
    page.page.wait_for_selector(".seat")
    assert page.page.evaluate("window.pwned") is None
    assert evil in page.page.locator("#log").inner_text()
    assert page.page.locator(".seat .name", has_text="window.pwned").count() == 1
    assert page.page.locator("img").count() == 0
    page.close()


def test_seat_view_page_holds_no_hidden_cards(browser, records, tmp_path):
    html = tmp_path / "seat.html"
    assert arena("view", str(records[4]), "--seat", "2", "--out", str(html), cwd=tmp_path).returncode == 0
    events = next(read_games(records[4]))
    page = Page(browser)
    page.page.goto(f"{html.as_uri()}#game=1&step=2")
    page.page.wait_for_selector(".seat")
    data = json.loads(page.page.locator("#arena-data").text_content())
    shown = data["games"][0]["events"]
    assert "seed" not in shown[0]
    assert shown[1]["hands"][2] == events[1]["hands"][2]  # its own cards
    assert [h for s, h in enumerate(shown[1]["hands"]) if s != 2] == [5, 5, 5]  # the others: counts
    assert shown[1]["stock"] == len(events[1]["stock"])
    assert all("card" not in e for e in shown if e["event"] in ("draw", "penalty") and e["seat"] != 2)
    face_up = page.page.eval_on_selector_all(
        ".seat .hand .card:not(.back)", "els => els.map(e => e.closest('.seat').dataset.seatPanel)"
    )
    assert set(face_up) == {"2"}
    page.close()


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tournament")
    done = arena(
        "tournament",
        "greedy",
        "random",
        "heuristic",
        "--players",
        "2,3",
        "--games",
        "1",
        "--trusted",
        "--workers",
        "1",
        "--db",
        "t.sqlite",
        "--quiet",
        "--json",
        cwd=folder,
    )
    assert done.returncode == 0, done.stderr
    return folder


def test_report_ranks_equal_standings_and_games_open_in_the_viewer(browser, tournament):
    done = arena("report", "--db", "t.sqlite", "--out", "site", "--workers", "1", "-q", cwd=tournament)
    assert done.returncode == 0, done.stderr
    standings = json.loads(arena("standings", "--db", "t.sqlite", "--json", cwd=tournament).stdout)
    site = tournament / "site"
    page = Page(browser)
    p = page.page
    p.goto((site / "index.html").as_uri())
    for size, scope in [("all", standings["overall"]), *standings["by_size"].items()]:
        rows = p.eval_on_selector_all(
            f'table.standings[data-size="{size}"] tr[data-bot]', "els => els.map(e => [e.dataset.bot, +e.dataset.rank])"
        )
        assert rows == [[r["bot"], r["rank"]] for r in scope["standings"]], size
    assert p.locator("svg.chart").count() >= 3
    page.shot("report-index.png", full=True)
    p.click('tr[data-rank="1"] a')
    p.wait_for_selector("text=Places by seat")
    page.shot("report-bot.png", full=True)
    p.goto((site / "games.html").as_uri())
    link = p.locator("table.games a").nth(4)
    key = link.inner_text()
    link.click()
    p.wait_for_function(f"location.hash === '#game={key}&step=0'")
    p.wait_for_selector(".seat")
    p.keyboard.press("End")
    # the page embeds only the game list; the game itself came from games/KEY.js
    assert "events" not in json.loads(p.locator("#arena-data").text_content())["games"][0]
    conn = sqlite3.connect(tournament / "t.sqlite")
    scores = dict(
        conn.execute(
            "SELECT r.seat, r.score FROM results r JOIN games g ON g.id = r.game_id WHERE g.game_key = ?", (key,)
        ).fetchall()
    )
    conn.close()
    assert page.scores() == scores
    page.shot("report-viewer.png")
    page.close()


STEP = seat_step(2)


@pytest.mark.long
def test_human_game_played_to_the_end_by_clicking(browser, tmp_path):
    record = tmp_path / "human.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena",
            "play",
            "human",
            "greedy",
            "random",
            "--web",
            "--seed",
            "5",
            "--rule",
            "limit=30",
            "--replay",
            str(record),
            "--json",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/\S+/", line)
        assert url, line
        page = Page(browser)
        p = page.page
        p.goto(url.group(0) + "?speed=100")
        # the first moves with the mouse (a refused card among them), the rest by a click in the page
        clicks, refused, real = 0, False, 0
        for _ in range(2000):  # steps, not seconds: a loaded machine plays the same game, slower
            p.wait_for_function(
                "() => ['move', 'over', 'closed'].includes(document.body.dataset.phase) && "
                "!document.querySelector('#table').dataset.animating"
            )
            version = p.get_attribute("body", "data-version")
            if p.get_attribute("body", "data-phase") != "move":
                break
            if real < 4 and p.locator(".seat.you .hand .card.playable").count():
                if not refused and p.locator(".seat.you .hand .card:not(.playable)").count():
                    p.locator(".seat.you .hand .card:not(.playable)").first.click(position={"x": 6, "y": 30})
                    p.wait_for_function("() => document.querySelectorAll('#messages li.error').length > 0")
                    assert re.search(r"not allowed: R\d", p.locator("#messages li.error").last.inner_text())
                    refused = True
                else:
                    p.locator(".seat.you .hand .card.playable").first.click(position={"x": 6, "y": 30})
                    if p.is_visible("#suits"):
                        p.click("#suits .suit >> nth=2")
                    real += 1
                if real == 2:
                    page.shot("play-desktop.png")
            else:
                did = p.evaluate(STEP)
                if did in ("wait", "jack"):  # a jack only shows the suits: the page's state is unchanged
                    continue
            clicks += 1
            p.wait_for_function(f"() => document.body.dataset.version !== '{version}'")
        p.wait_for_function("() => ['over', 'closed'].includes(document.body.dataset.phase)", timeout=30000)
        page.shot("play-over.png")
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        games = list(read_games(record))
        assert len(games) == 1 and games[0][-1]["event"] == "end"
        assert page.scores() == dict(enumerate(games[0][-1]["scores"]))
        assert json.loads(out)["games"] == 1
        assert refused and real >= 1 and clicks > 5
        page.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_hostile_bot_markup_stays_text_in_the_report_and_viewer(browser, tmp_path):
    """tests/sandbox/python/hostile/html_injection.py plays a real sandboxed tournament; its name and say
    lines are markup. In the report's pages and the viewer nothing of it runs or renders."""
    bot = Path(__file__).parents[1] / "sandbox" / "python" / "hostile" / "html_injection.py"
    done = arena(
        "tournament",
        "greedy",
        str(bot),
        "-k",
        "2",
        "-n",
        "1",
        "-j",
        "1",
        "--db",
        "t.sqlite",
        "-q",
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    done = arena("report", "--db", "t.sqlite", "--out", "site", "-j", "1", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    site = tmp_path / "site"
    page = Page(browser)
    p = page.page
    for name in ("index.html", "games.html", "bots/bot-1.html"):
        p.goto((site / name).as_uri())
        assert p.evaluate("window.pwned") is None
        assert p.locator("b, img, script[src]").count() == 0, name
    assert "</script><b onclick=x>bold" in p.locator("body").inner_text()  # Bot.name, shown as text
    p.goto((site / "viewer.html").as_uri() + "#game=2p-t0-d0-r0&step=end")
    p.wait_for_selector(".seat")
    p.keyboard.press("Home")
    for _ in range(12):
        p.keyboard.press("Shift+ArrowRight")
    assert p.evaluate("window.pwned") is None
    assert p.locator("img, b").count() == 0
    assert 'onerror="window.pwned = 2"' in p.locator("#log").inner_text()
    page.shot("viewer-hostile-say.png")
    page.close()


@pytest.mark.long
def test_the_seat_header_and_bar_agree_and_a_stopped_match_claims_no_result(browser, tmp_path):
    # Issue 18: the header said "your move" while the bar said "the others are playing" (the
    # page was still showing what happened before the move), and after Ctrl-C the page said
    # "Game over: the result is on the table" of a game that had no result.
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", "human", "greedy", "random", "--web", "--seed", "5",
         "--replay", str(tmp_path / "stopped.jsonl")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/\S+/", proc.stderr.readline())
        assert url
        page = Page(browser)
        p = page.page
        p.goto(url.group(0) + "?speed=0.5")  # 0.22 s a step: the catching-up lasts long enough to look at
        # the seat's turn while the page is still catching up: header, bar and buttons read at one instant
        status, hint, closed = p.wait_for_function(
            """() => document.body.dataset.phase === 'move' && document.querySelector('#table').dataset.animating
                ? [document.getElementById('status').textContent, document.getElementById('hint').textContent,
                   document.getElementById('draw').disabled && document.getElementById('finish').disabled]
                : null"""
        ).json_value()
        assert "your move" not in status and "others are playing" in status.lower(), (status, hint)
        assert "others are playing" in hint.lower() and closed, (status, hint)
        p.wait_for_function("() => !document.querySelector('#table').dataset.animating", timeout=30000)
        status, hint = p.inner_text("#status"), p.inner_text("#hint")
        assert status == "your move" and "others" not in hint.lower(), (status, hint)
        proc.send_signal(signal.SIGINT)  # Ctrl-C at the terminal, in the middle of game 1
        p.wait_for_function("() => document.body.dataset.phase === 'closed'", timeout=30000)
        status, hint = p.inner_text("#status"), p.inner_text("#hint")
        assert "stopped" in status and "no result" in hint, (status, hint)
        assert "result is on the table" not in hint and "over" not in status
        assert proc.wait(timeout=30) == 130
        page.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
