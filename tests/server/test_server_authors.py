"""The author's dashboard (issue 30, item 2), in-process (Starlette's TestClient, the ladder and the check
played here): my bots, versions as the author numbers them, identical re-uploads, each bot's games paged
and filtered, the viewer at the author's seat, the bot's own output for its author alone, the check's
failing smoke games to replay, and the rating chart's axes."""

from __future__ import annotations

import json
import random
import re
import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.server import ROOT

from arena.authoring.check import CheckSettings
from arena.server.contest.checks import run_queue
from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.ladder.matchmaker import LadderPlayer
from arena.server.routes.tables import guest_link
from arena.server.store import database as store
from arena.server.store import outputs as outputs_of

with warnings.catch_warnings():  # it warns that it will move to another HTTP client; the one installed works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

#: Prints each move (its author's output), and raises on its fourth (a fault whose detail is its author's).
ANN = '''"""Prints its thoughts; faults on its fourth move."""
class Bot:
    name = "annbot"
    def __init__(self):
        self.moves = 0
    def move(self, turn):
        self.moves += 1
        print("ann-private-print", self.moves)
        if self.moves == 4:
            raise ValueError("ann-secret-detail")
        while not turn.can_finish():
            if turn.puttable():
                turn.put(turn.puttable()[0])
            elif turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''
#: Fails its check: raises on every move.
FAILING = '''"""Raises on every move."""
class Bot:
    name = "annfail"
    def move(self, turn):
        print("annfail-private-print")
        raise RuntimeError("annfail-detail")
'''
GREEDY = (ROOT / "bots" / "greedy.py").read_text()
#: A 2012 bot (the announcement's demo) with a debugging line and a public message a move.
BEN = (
    (ROOT / "examples" / "demo2012.js")
    .read_text()
    .replace(
        "movement: function (first) {",
        "movement: function (first) { console.log('ben-private-debug'); this.msg('ben-public-msg');",
        1,
    )
)


def login(client: TestClient, token: str) -> None:
    page = client.get("/login").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf
    answer = client.post("/login", data={"token": token, "csrf": csrf.group(1)}, follow_redirects=False)
    assert answer.status_code == 303


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def upload(client: TestClient, token: str, source: str, name: str) -> Any:
    return client.post(f"/api/submissions?name={name}", content=source.encode(), headers=bearer(token))


def build(folder: Path) -> dict[str, Any]:
    """A contest in ``folder`` with cat's, ann's and ben's bots, a dozen ladder games and ann's failed check."""
    organiser = store.init_contest(folder, "Cup")
    db = store.open_db(folder)
    tokens = {who: store.invite(db, who) for who in ("cat", "ann", "ben")}
    tokens["organiser"] = organiser
    app = create_app(ServerSettings(folder, workers=False))
    with TestClient(app) as client:
        # cat first: submission ids are not the versions (annbot v1 is submission 2)
        sids = {}
        for who, source, name in (
            ("cat", GREEDY.replace('"greedy"', '"catbot"'), "catbot.py"),
            ("ann", ANN, "annbot.py"),
            ("ben", BEN, "benbot.js"),
        ):
            answer = upload(client, tokens[who], source, name)
            assert answer.status_code == 202, answer.text
            sids[name.split(".")[0]] = answer.json()["id"]
        for sid in sids.values():  # their checks are tests/server/test_server.py's: here, the ladder's games
            store.finish_check(db, sid, {"clean": True}, None)
        player = LadderPlayer(db)
        try:
            while store.games_count(db) < 12:
                player.play_block(random.Random(store.games_count(db)))
        finally:
            player.close()
        failing = upload(client, tokens["ann"], FAILING, "annfail.py").json()["id"]
        assert run_queue(db, CheckSettings(games=1), 1)  # its real check, in the sandbox: it fails
    return {"folder": folder, "tokens": tokens, "app": app, "db": db, "sids": sids, "failing": failing}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    made = build(tmp_path_factory.mktemp("authors") / "cup")
    with TestClient(made["app"]):
        yield made
    made["db"].close()


def signed(site: dict[str, Any], who: str | None) -> TestClient:
    client = TestClient(site["app"])
    if who is not None:
        login(client, site["tokens"][who])
    return client


def games_of(db: sqlite3.Connection, sid: int) -> list[tuple[str, int]]:
    return [
        (r[0], r[1]) for r in db.execute("SELECT game, seat FROM seats WHERE submission = ? ORDER BY rowid", (sid,))
    ]


# -- my bots, versions ------------------------------------------------------------------------------


def test_my_bots_lists_every_version_its_check_review_and_rating(site: dict[str, Any]) -> None:
    db, tokens = site["db"], site["tokens"]
    store.review(db, site["failing"], "rejected", "please stop raising")
    with signed(site, "ann") as client:
        mine = client.get("/api/mine", headers=bearer(tokens["ann"])).json()["bots"]
        page = client.get("/mine").text
    by_name = {b["name"]: b for b in mine}
    assert set(by_name) == {"annbot", "annfail"}  # hers alone
    ann = by_name["annbot"]["versions"]
    assert [v["label"] for v in ann] == ["v1"] and ann[0]["id"] == site["sids"]["annbot"] != 1
    rating = db.execute("SELECT round, mu, sigma, games FROM ratings WHERE submission = ?", (ann[0]["id"],)).fetchone()
    assert [(r["round"], r["mu"], r["sigma"], r["games"]) for r in ann[0]["ratings"]] == [tuple(rating)]
    assert ann[0]["active"] and ann[0]["status"] == "clean"
    failed = by_name["annfail"]["versions"][0]  # a failed check is listed, with why, and reachable
    assert failed["status"] == "failed" and "annfail-detail" in failed["error"]
    assert failed["review"] == "rejected" and failed["comment"] == "please stop raising"
    assert 'data-bot="annfail"' in page and "please stop raising" in page and "annfail-detail" in page
    assert f'href="/submissions/{site["failing"]}"' in page and 'href="/bots/annfail"' in page
    with signed(site, None) as client:
        assert client.get("/bots/annfail").status_code == 200  # not on the leaderboard, still its page
        assert client.get("/mine").status_code == 401
        assert client.get("/api/mine").status_code == 401
    with signed(site, "organiser") as client:
        assert client.get("/api/mine", headers=bearer(tokens["organiser"])).status_code == 403


def test_versions_are_labelled_as_their_author_numbers_them_everywhere(site: dict[str, Any]) -> None:
    db, sids = site["db"], site["sids"]
    key, _ = games_of(db, sids["annbot"])[0]
    names = [
        p["name"]
        for p in store.unpack(db.execute("SELECT log FROM games WHERE key = ?", (key,)).fetchone()[0])[0]["players"]
    ]
    assert "annbot v1" in names and not any("#" in n for n in names)  # not annbot#v2, its submission id
    with signed(site, "ann") as client:
        assert (
            client.get(f"/api/submissions/{sids['annbot']}", headers=bearer(site["tokens"]["ann"])).json()["label"]
            == "v1"
        )
        games = client.get("/api/bots/annbot/games").json()["games"]
        assert {s["name"] for g in games for s in g["seats"]} <= {"annbot v1", "benbot v1", "catbot v1"}
        page = client.get(f"/submissions/{sids['annbot']}").text
        assert "<h2>annbot v1</h2>" in page


def test_identical_bytes_uploaded_again_are_the_same_version_said_so(site: dict[str, Any]) -> None:
    db, tokens = site["db"], site["tokens"]
    before = db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
    with signed(site, "ann") as client:
        again = upload(client, tokens["ann"], ANN, "annbot.py")
        assert again.status_code == 200, again.text
        body = again.json()
        assert body["identical"] and body["id"] == site["sids"]["annbot"] and body["label"] == "v1"
        assert body["message"] == "identical to v1: no new version was made"
        csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/upload").text)
        assert csrf
        sent = client.post(
            "/upload", data={"csrf": csrf.group(1)}, files={"bot": ("annbot.py", ANN.encode())}, follow_redirects=True
        )
        assert sent.status_code == 200 and "Your upload is identical to v1: no new version was made." in sent.text
        changed = upload(client, tokens["ann"], ANN.replace("its thoughts", "its thoughts, again"), "annbot.py")
        assert changed.status_code == 202  # a changed byte is a new version
    after = db.execute("SELECT bot, version FROM submissions WHERE id > ? ORDER BY id", (before - 1,)).fetchall()
    assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == before + 1
    assert tuple(after[-1]) == ("annbot", 2)
    db.execute("DELETE FROM submissions WHERE id = ?", (changed.json()["id"],))  # the other tests' ladder stays


# -- a bot's games ----------------------------------------------------------------------------------


def test_a_bots_games_are_paged_and_filtered(site: dict[str, Any]) -> None:
    db, sids = site["db"], site["sids"]
    seated = [sids["annbot"], sids["catbot"], sids["benbot"]]
    block = store.new_block(db, seated)
    for n in range(70):  # more than a page: recorded games, of 2 and 3 players, some with ann's fault
        table = seated[: 2 + n % 2]
        faults = [(0, "timeout", "slow", 1)] if n % 5 == 0 else []
        assert store.record_game(
            db, f"x{n}", block, 0, table, list(range(1, len(table) + 1)), [0] * len(table), faults, []
        )
    total = len({g for g, _ in games_of(db, sids["annbot"])})
    with signed(site, None) as client:
        first = client.get("/api/bots/annbot/games").json()
        assert first["total"] == total and first["pages"] == -(-total // 50) and len(first["games"]) == 50
        assert first["games"][0]["key"] == "x69"  # newest first
        last = client.get(f"/api/bots/annbot/games?page={first['pages']}").json()
        seen = {g["key"] for g in first["games"]} | {g["key"] for g in last["games"]}
        assert len(seen) == len(first["games"]) + len(last["games"])  # no game on two pages
        row = first["games"][0]
        assert row["date"].endswith("UTC") and row["players"] == 3
        assert [(s["name"], s["place"], s["score"]) for s in row["seats"]] == [
            ("annbot v1", 1, 0),
            ("catbot v1", 2, 0),
            ("benbot v1", 3, 0),
        ]
        three = client.get("/api/bots/annbot/games?players=3").json()
        assert three["total"] == sum(1 for g in range(70) if g % 2) + count(db, sids["annbot"], players=3)
        assert all(g["players"] == 3 for g in three["games"])
        ben = client.get("/api/bots/annbot/games?opponent=benbot").json()
        met = {g for g, _ in games_of(db, sids["annbot"])} & {g for g, _ in games_of(db, sids["benbot"])}
        assert ben["total"] == len(met) and all(any(s["bot"] == "benbot" for s in g["seats"]) for g in ben["games"])
        timeouts = client.get("/api/bots/annbot/games?fault=timeout").json()
        assert timeouts["total"] == 14 and all("timeout" in g["mine"][0]["faults"] for g in timeouts["games"])
        exceptions = client.get("/api/bots/annbot/games?fault=exception").json()["games"]
        assert exceptions and all("exception" in g["mine"][0]["faults"] for g in exceptions)
        faulty = client.get("/api/bots/annbot/games?fault=any").json()["total"]
        assert faulty == 14 + count(db, sids["annbot"], fault=True)
        for bad in ("players=7", "players=x", "fault=nonsense", "page=0", "opponent=%3Cb%3E", "page=1" + "0" * 30):
            answer = client.get(f"/api/bots/annbot/games?{bad}")
            assert answer.status_code == 400 and set(answer.json()) == {"error"}, bad
        assert client.get("/api/bots/nobot/games").status_code == 404
        cats = client.get("/api/bots/annbot/games?opponent=catbot").json()["total"]
        page = client.get("/bots/annbot?opponent=catbot&page=2").text
        assert f"page 2 of {-(-cats // 50)}" in page and 'rel="prev"' in page
        assert 'href="/bots/annbot?opponent=catbot&amp;page=1#games"' in page
    db.execute("DELETE FROM seats WHERE game LIKE 'x%'")
    db.execute("DELETE FROM games WHERE key LIKE 'x%'")


def count(db: sqlite3.Connection, sid: int, players: int | None = None, fault: bool = False) -> int:
    """The ladder's own games of ``sid`` at tables of ``players``, or in which it faulted (read from the rows)."""
    found = 0
    for key, seat in games_of(db, sid):
        if key.startswith("x"):
            continue
        size, faults = db.execute(
            "SELECT (SELECT COUNT(*) FROM seats WHERE game = ?), faults FROM games WHERE key = ?", (key, key)
        ).fetchone()
        mine = [f for f in json.loads(faults) if f[0] == seat and f[1] != "retired"]
        found += (players is None or size == players) and (not fault or bool(mine))
    return found


def test_round_two_says_which_seat_was_which_version(site: dict[str, Any]) -> None:
    db, sids = site["db"], site["sids"]
    ann = int(db.execute("SELECT author FROM submissions WHERE id = ?", (sids["annbot"],)).fetchone()[0])
    two = store.add_submission(db, ann, "annbot", ANN.replace("faults", "faults!").encode())
    store.finish_check(db, two, {"clean": True}, None)
    block = store.new_block(db, [sids["annbot"], sids["benbot"], two])
    assert store.record_game(db, "both", block, 0, [sids["annbot"], sids["benbot"], two], [2, 3, 1], [5, 9, 0], [], [])
    with signed(site, "ann") as client:
        games = client.get("/api/bots/annbot/games").json()["games"]
        page = client.get("/bots/annbot").text
    rows = [g for g in games if g["key"] == "both"]
    assert len(rows) == 1  # once, not once a version
    assert [(s["label"], s["seat"], s["place"]) for s in rows[0]["mine"]] == [("v1", 0, 2), ("v2", 2, 1)]
    assert [s["name"] for s in rows[0]["opponents"]] == ["benbot v1"]
    row = page.split('data-game="both"', 1)[1].split("</tr>", 1)[0]
    assert "v1 at seat 0" in row and "v2 at seat 2" in row and "replay as v2" in row
    db.execute("DELETE FROM seats WHERE game = 'both'")
    db.execute("DELETE FROM games WHERE key = 'both'")
    db.execute("UPDATE bots SET active = ? WHERE name = 'annbot'", (sids["annbot"],))
    for table in ("ratings", "submissions"):
        db.execute(f"DELETE FROM {table} WHERE {'submission' if table == 'ratings' else 'id'} = ?", (two,))


def test_a_game_opens_in_the_viewer_at_the_authors_own_seat(site: dict[str, Any]) -> None:
    db, sids = site["db"], site["sids"]
    key, seat = next((g, s) for g, s in games_of(db, sids["annbot"]) if s > 0)  # not seat 0, the default
    with signed(site, "ann") as client:
        html = client.get(f"/games/{key}").text
    data = json.loads(html.split('<script type="application/json" id="arena-data">', 1)[1].split("</script>", 1)[0])
    assert data["seat"] == seat and "annbot v1" in data["title"]
    hands = next(e for e in data["games"][0]["events"] if e["event"] == "deal")["hands"]
    assert isinstance(hands[seat], list) and all(isinstance(h, int) for s, h in enumerate(hands) if s != seat)
    with signed(site, None) as client:
        public = client.get(f"/games/{key}").text
    assert '"seat":null' in public.replace(" ", "")


# -- the bot's own output ---------------------------------------------------------------------------


def test_a_bots_output_is_shown_to_its_author_alone(site: dict[str, Any]) -> None:
    db, sids, tokens = site["db"], site["sids"], site["tokens"]
    for key, seat in games_of(db, sids["annbot"]):  # every ladder game of ann's kept her prints with it
        text = db.execute("SELECT text FROM outputs WHERE game = ? AND seat = ?", (key, seat)).fetchone()
        assert text is not None and "ann-private-print 1" in outputs_of.unpack_text(text[0])
    # and a game of ann's and ben's alone, whose outputs are known
    block = store.new_block(db, [sids["benbot"], sids["annbot"]])
    key = "annben"
    outputs = ["ben-private-debug here\n", "ann-private-print here\n\x1b[31mred\u202e\n"]
    assert store.record_game(db, key, block, 0, [sids["benbot"], sids["annbot"]], [2, 1], [30, 0], [], [], outputs)
    with signed(site, "ann") as client:
        page = client.get(f"/games/{key}/output").text
        api = client.get(f"/api/games/{key}/output", headers=bearer(tokens["ann"])).json()
        listed = client.get("/bots/annbot").text
        games = client.get("/api/bots/annbot/games", headers=bearer(tokens["ann"])).json()["games"]
    assert "ann-private-print here" in page and "ben-private-debug" not in page
    assert "\\x1b[31mred\\u202e" in page  # her own bytes, shown as inert escapes
    assert [s["name"] for s in api["seats"]] == ["annbot v1"] and api["seats"][0]["output"] == outputs[1]
    assert f'href="/games/{key}/output"' in listed and any(s["output"] for g in games for s in g["mine"])
    with signed(site, "ben") as client:  # another author at the same table: his own seat, never hers
        page = client.get(f"/games/{key}/output").text
        api = client.get(f"/api/games/{key}/output", headers=bearer(tokens["ben"])).json()
        listed = client.get("/bots/annbot").text
        games = client.get("/api/bots/annbot/games", headers=bearer(tokens["ben"])).json()["games"]
        real = [k for k, _ in games_of(db, sids["benbot"]) if k != key][0]
        his = client.get(f"/games/{real}/output").text  # a ladder game of his 2012 bot
    assert "ben-private-debug here" in page and "ann-private-print" not in page
    assert [s["name"] for s in api["seats"]] == ["benbot v1"] and "ann-private-print" not in json.dumps(api)
    assert "/output" not in listed and not any(s["output"] for g in games for s in g["seats"])
    assert "ben-private-debug" in his and "ben-public-msg" in his and "ann-private-print" not in his
    with signed(site, "cat") as client:  # an author with no seat in it
        assert client.get(f"/games/{key}/output").status_code == 404
        answer = client.get(f"/api/games/{key}/output", headers=bearer(tokens["cat"]))
        assert answer.status_code == 404 and "private" not in answer.text
    with TestClient(site["app"]) as client:  # a guest, and the public
        client.get(guest_link(site["app"].state.secret, "zed"))
        assert client.get(f"/games/{key}/output").status_code == 401
        assert "private" not in client.get(f"/games/{key}").text + client.get("/bots/annbot").text
    with signed(site, None) as client:
        assert client.get(f"/games/{key}/output").status_code == 401
        assert client.get(f"/api/games/{key}/output").status_code == 401
        assert "private" not in client.get("/api/bots/annbot/games").text
    with signed(site, "organiser") as client:  # the organiser sees every seat's
        page = client.get(f"/games/{key}/output").text
    assert "ann-private-print here" in page and "ben-private-debug here" in page
    db.execute("DELETE FROM outputs WHERE game = ?", (key,))
    db.execute("DELETE FROM seats WHERE game = ?", (key,))
    db.execute("DELETE FROM games WHERE key = ?", (key,))


# -- the check's smoke games ------------------------------------------------------------------------


def test_the_checks_failing_smoke_games_open_in_the_viewer_at_the_bots_seat(site: dict[str, Any]) -> None:
    sid, tokens = site["failing"], site["tokens"]
    with signed(site, "ann") as client:
        page = client.get(f"/submissions/{sid}").text
        links = re.findall(rf'href="(/submissions/{sid}/games/[^"]+)"', page)
        assert links and "Faults in the smoke games" in page and "annfail-private-print" in page
        assert "<th>what</th>" not in page  # the old headings
        replay = client.get(links[0]).text
        view = client.get(f"/api/submissions/{sid}", headers=bearer(tokens["ann"])).json()
    data = json.loads(replay.split('<script type="application/json" id="arena-data">', 1)[1].split("</script>", 1)[0])
    seat = data["seat"]
    events = data["games"][0]["events"]
    assert any(e["event"] == "fault" and e["seat"] == seat and "annfail-detail" in e.get("detail", "") for e in events)
    hands = next(e for e in events if e["event"] == "deal")["hands"]
    assert all(isinstance(h, int) for s, h in enumerate(hands) if s != seat)  # R10: its own cards only
    assert view["replays"] and "annfail-private-print" in view["replays"][0]["output"]
    for who in ("ben", None):
        with signed(site, who) as client:
            assert client.get(links[0]).status_code in (401, 404)
            assert "annfail-private-print" not in client.get(f"/submissions/{sid}").text
    with signed(site, "organiser") as client:
        assert client.get(links[0]).status_code == 200
        assert links[0] in client.get(f"/desk/{sid}").text


# -- the rating chart -------------------------------------------------------------------------------


def test_the_rating_chart_has_axes_a_fixed_least_span_and_a_sigma_band(site: dict[str, Any]) -> None:
    from arena.report.charts import MIN_RATING_SPAN, rating_chart

    chart = rating_chart([(n, 25 + (n % 3) * 1.3, 0.2) for n in range(1, 30)], title="t")  # a 2.6-point range
    assert chart is not None
    ticks = [float(t) for t in re.findall(r'text-anchor="end"[^>]*>([^<]+)<', chart)]
    assert ticks[-1] - ticks[0] >= MIN_RATING_SPAN  # not stretched over the whole height
    assert "games played" in chart and "rating" in chart and "<polygon" in chart and "<polyline" in chart
    ys = [float(p.split(",")[1]) for p in re.search(r'<polyline points="([^"]+)"', chart).group(1).split()]  # type: ignore[union-attr]
    assert max(ys) - min(ys) < 0.4 * 250  # 2.6 points of at least 10: well under half the height
    assert rating_chart([(1, 25, 8)], title="t") is None
    with signed(site, None) as client:
        page = client.get("/bots/annbot").text
    assert 'class="chart-box rating"' in page and "games played" in page and "<script" not in page.split("<main>")[1]


def test_a_stored_output_is_read_back_bounded(site: dict[str, Any]) -> None:
    # the database is input too: a row that inflates to 10 MB shows its first 8 KiB; one that is no
    # zlib stream, nothing; neither is a 500
    import zlib

    db, sids, tokens = site["db"], site["sids"], site["tokens"]
    (key, seat), (other, other_seat) = games_of(db, sids["annbot"])[:2]
    saved = db.execute("SELECT game, seat, text FROM outputs WHERE game IN (?, ?)", (key, other)).fetchall()
    db.execute("UPDATE outputs SET text = ? WHERE game = ? AND seat = ?", (zlib.compress(b"a" * 10**7), key, seat))
    db.execute("UPDATE outputs SET text = ? WHERE game = ? AND seat = ?", (b"not zlib", other, other_seat))
    try:
        with signed(site, "ann") as client:
            big = client.get(f"/api/games/{key}/output", headers=bearer(tokens["ann"])).json()["seats"][0]["output"]
            assert big == "a" * outputs_of.OUTPUT_BYTES
            assert client.get(f"/games/{key}/output").status_code == 200
            odd = client.get(f"/api/games/{other}/output", headers=bearer(tokens["ann"]))
            assert odd.status_code == 200 and odd.json()["seats"][0]["output"] == ""
    finally:
        db.executemany("UPDATE outputs SET text = ? WHERE game = ? AND seat = ?", [(r[2], r[0], r[1]) for r in saved])


# -- in Chromium --------------------------------------------------------------------------------------


@pytest.mark.long
def test_the_authors_pages_in_chromium_at_desktop_and_phone_sizes(browser: Any, tmp_path: Path) -> None:
    """Every page of the dashboard as a person sees it, served as users serve it: no console error, no page
    wider than the phone's screen, the chart drawn without a script; screenshots to look at (ARENA_SHOTS=DIR)."""
    import os

    from support.browser import DESKTOP, PHONE
    from support.server import Server

    made = build(tmp_path / "cup")
    sids, failing = made["sids"], made["failing"]
    key = games_of(made["db"], sids["annbot"])[0][0]
    made["db"].close()
    shots = Path(os.environ.get("ARENA_SHOTS") or tmp_path)
    server = Server(made["folder"], "--ladder-workers", "0", "--check-workers", "0")
    server.start()
    try:
        page = browser.new_page(viewport=DESKTOP)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/login")
        page.fill("#token", made["tokens"]["ann"])
        page.click("button[type=submit]")
        page.wait_for_url("**/upload")
        page.click("header a[href='/mine']")
        page.wait_for_selector("section[data-bot=annfail]")
        views = {
            "mine": "/mine",
            "bot": "/bots/annbot",
            "bot-faults": "/bots/annbot?fault=any#games",
            "output": f"/games/{key}/output",
            "submission": f"/submissions/{failing}",
        }
        for name, path in views.items():
            page.goto(server.url + path)
            for size, viewport in (("1280", DESKTOP), ("390", PHONE)):
                page.set_viewport_size(viewport)
                wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert wide <= 0, (name, size, wide)  # tables scroll in their box, the page does not
                page.screenshot(path=str(shots / f"authors-{name}-{size}.png"), full_page=True)
                page.screenshot(path=str(shots / f"authors-{name}-{size}-top.png"))
            page.set_viewport_size(DESKTOP)
        page.goto(server.url + "/bots/annbot")
        assert page.locator("figure.rating svg polygon:visible").count() == 1  # the band, drawn without a script
        page.set_viewport_size(PHONE)  # the phone's own chart: its text as large as the wide one's
        assert page.locator("figure.rating svg polygon:visible").count() == 1
        assert page.evaluate("document.querySelector('.chart-narrow svg').getBoundingClientRect().width") > 300
        page.set_viewport_size(DESKTOP)
        size = (page.text_content("table.games tbody tr:last-child td.players") or "").strip()
        page.select_option("select[name=players]", size)
        page.click("form.filters button[type=submit]")
        page.wait_for_url(f"**players={size}**")
        sizes = page.locator("table.games tbody tr td.players").all_text_contents()
        assert sizes and {s.strip() for s in sizes} == {size}
        page.goto(server.url + f"/submissions/{failing}")
        page.click("a.replay >> nth=0")
        page.wait_for_selector("#table")
        assert "as seen by seat" in (page.text_content("#game-title") or "")
        page.screenshot(path=str(shots / "authors-smoke-replay-1280.png"))
        page.goto(server.url + f"/games/{key}")
        page.wait_for_selector("#table")
        assert "as seen by seat" in (page.text_content("#game-title") or "")
        page.screenshot(path=str(shots / "authors-game-1280.png"))
        same = tmp_path / "annbot.py"  # the same file again, through the form
        same.write_text(ANN)
        page.goto(server.url + "/upload")
        page.set_input_files("#bot", str(same))
        page.click("#send")
        page.wait_for_selector("#identical")
        assert "identical to v1" in (page.text_content("#identical") or "")
        page.set_viewport_size(PHONE)
        page.screenshot(path=str(shots / "authors-identical-390.png"))
        assert errors == []
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]


def test_a_bots_games_list_reads_its_latest_seats_only(site: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    # the list's work is bounded however many games the bot played: it reads its latest WINDOW seats,
    # and says so; the chart its latest HISTORY games
    from arena.server.routes import dashboard

    db, sids = site["db"], site["sids"]
    monkeypatch.setattr(dashboard, "WINDOW", 5)
    played = games_of(db, sids["annbot"])
    with signed(site, None) as client:
        data = client.get("/api/bots/annbot/games").json()
        page = client.get("/bots/annbot?fault=any").text
    assert data["window"] == 5 and data["total"] == 5
    assert [g["key"] for g in data["games"]] == [g for g, _ in reversed(played)][:5]
    assert "among its latest 5" in page
