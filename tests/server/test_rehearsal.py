"""A rehearsal of a whole contest (issue 30, item 5), played as people play it, the server started as
users start it: the organiser's `arena contest init` and `invite`, three authors' uploads (a Python
file through the upload page in Chromium, a 2012 JavaScript bot and a C++ kit with `arena submit`
from the terminal), the ladder, a `kill -9` of the server mid-ladder and its restart, the desk's
review by its forms, a person at a table, each author's dashboard (their own games and output,
never another's), round two, the final and its published site.

One test, in the order a contest runs; each step's own edge cases are the other server tests'."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import shutil
import sqlite3
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.cli import arena_here, run_process
from support.server import ARENA, BOUND, ROOT, Server, token_of, wait_for
from websockets.sync.client import connect

pytestmark = pytest.mark.long

#: ann's bot, uploaded through the page: greedy, printing a line each move (its own output).
ANN = (
    (ROOT / "bots" / "greedy.py")
    .read_text()
    .replace('name = "greedy"', 'name = "annbot"')
    .replace("    def move(self, turn):\n", '    def move(self, turn):\n        print("ann-private-print")\n', 1)
)
#: ben's bot: the 2012 announcement's demo as it was listed, with a console line a move.
BEN = (
    (ROOT / "examples" / "demo2012.js")
    .read_text()
    .replace("movement: function (first) {", "movement: function (first) { console.log('ben-private-debug');", 1)
)
#: What each author's bot writes that only its author (and the organiser) may read.
PRIVATE = {"ann": "ann-private-print", "ben": "ben-private-debug", "cat": "cat-private-stderr"}
BOTS = {"ann": "annbot", "ben": "benbot", "cat": "catbot"}


class Person:
    """Someone at the site with a browser's cookies, by plain HTTP (the forms with their CSRF token)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def call(self, method: str, path: str, body: Any = None, kind: str = "application/json") -> tuple[int, Any]:
        data = None
        headers = {"Accept": "text/html"} if body is None else {}
        if body is not None:
            data = urllib.parse.urlencode(body).encode() if kind.endswith("urlencoded") else json.dumps(body).encode()
            headers["Content-Type"] = kind
        req = urllib.request.Request(self.server.url + path, data=data, method=method, headers=headers)
        try:
            with self.opener.open(req, timeout=30) as r:
                status, raw, got = r.status, r.read(), r.headers.get("content-type", "")
        except urllib.error.HTTPError as e:
            status, raw, got = e.code, e.read(), e.headers.get("content-type", "")
        return status, json.loads(raw) if got.startswith("application/json") else raw.decode()

    def csrf(self, path: str) -> str:
        status, page = self.call("GET", path)
        found = re.search(r'name="csrf" value="([^"]+)"', page)
        assert status == 200 and found, (path, status)
        return found.group(1)

    def form(self, path: str, fields: dict[str, str], page: str) -> tuple[int, Any]:
        return self.call("POST", path, {"csrf": self.csrf(page), **fields}, "application/x-www-form-urlencoded")

    def sign_in(self, token: str) -> Person:
        status, _ = self.form("/login", {"token": token}, "/login")
        assert status == 200, status  # a wrong token is the sign-in form again, 401
        return self

    def cookie(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)


def database(folder: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{folder}/contest.db?mode=ro", uri=True)


def game_keys(folder: Path) -> set[str]:
    db = database(folder)
    try:
        return {r[0] for r in db.execute("SELECT key FROM games")}
    finally:
        db.close()


def rated_once(folder: Path) -> bool:
    """Whether each version's rating counts each of its ladder games once (written in one transaction)."""
    db = database(folder)
    try:
        db.execute("BEGIN")  # one snapshot for both reads: the ladder writes on
        rated = {k: v for k, v in db.execute("SELECT submission, games FROM ratings WHERE round = 1") if v}
        seated = dict(db.execute("SELECT submission, COUNT(*) FROM seats GROUP BY submission").fetchall())
    finally:
        db.close()
    return rated == seated


def without(folder: Path, bot: str) -> str | None:
    """A ladder game in which ``bot`` has no seat, if any."""
    db = database(folder)
    try:
        row = db.execute(
            "SELECT key FROM games WHERE key NOT IN (SELECT seats.game FROM seats JOIN submissions s "
            "ON s.id = seats.submission WHERE s.bot = ?) LIMIT 1",
            (bot,),
        ).fetchone()
    finally:
        db.close()
    return None if row is None else str(row[0])


def board(server: Server) -> dict[str, dict[str, Any]]:
    status, data = server.get("/api/leaderboard")
    assert status == 200, (status, data)
    return {b["bot"]: b for b in data["bots"]}


def every_bot_played(server: Server, floor: int = 1) -> bool:
    bots = board(server)
    return set(BOTS.values()) <= set(bots) and all(bots[b]["games"] >= floor for b in BOTS.values())


def is_worker(pid: int) -> bool:
    try:
        return b"arena.server.workers.processes" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def submit(path: Path, server: Server, token: str) -> subprocess.Popen[str]:
    """``arena submit PATH --server URL`` as an author runs it in a terminal (it waits for the check)."""
    return subprocess.Popen(
        [*ARENA, "submit", str(path), "--server", server.url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "ARENA_TOKEN": token},
    )


def finished(proc: subprocess.Popen[str]) -> str:
    out, err = proc.communicate(timeout=BOUND)
    assert proc.returncode == 0, out + err
    return out


def a_move(state: dict[str, Any]) -> dict[str, Any]:
    """What a person may click in ``state``: the first card they may put, else a draw, else finish."""
    if state["puttable"]:
        card = state["puttable"][0]
        return {"action": "put", "card": card, "suit": "h" if card.startswith("j") else None}
    return {"action": "draw" if state["can_draw"] else "finish"}


def sit_and_play(cookie: str, server: Server, key: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A person's seat at table ``key`` over its websocket, played to the end: (the actions sent, the last state)."""
    sent: list[dict[str, Any]] = []
    with connect(
        f"ws://127.0.0.1:{server.port}/ws/tables/{key}",
        additional_headers={"Cookie": cookie},
        origin=server.url,  # type: ignore[arg-type]  # websockets takes a str
        open_timeout=30,
    ) as ws:
        while True:
            state = json.loads(ws.recv(timeout=BOUND))
            assert "error" not in state, state
            if state["phase"] == "closed":
                return sent, state
            if state["phase"] == "move":
                sent.append(a_move(state))
                ws.send(json.dumps(sent[-1]))


def test_a_small_contest_rehearsed_as_people_run_it(browser: Any, tmp_path: Path) -> None:
    if shutil.which("node") is None or not (ROOT / "node_modules").is_dir():
        pytest.fail("node and npm ci are needed for the 2012 bot (.ci/run installs them)")
    if shutil.which("g++") is None:
        pytest.fail("g++ is needed for the C++ kit (.ci/run installs it)")
    folder = tmp_path / "cup"

    # -- the organiser makes the contest and invites three authors ------------------------------------
    made = arena_here("contest", "init", folder, "--name", "Rehearsal Cup")
    assert made.returncode == 0, made.stderr
    organiser = token_of(made.stdout.splitlines()[-1])
    tokens = {}
    for who in BOTS:
        invited = arena_here("contest", "invite", folder, who)
        assert invited.returncode == 0 and f"author token for {who}" in invited.stdout, invited.stderr
        tokens[who] = token_of(invited.stdout)

    # -- the authors write their bots -----------------------------------------------------------------
    ann_file = tmp_path / "annbot.py"
    ann_file.write_text(ANN)
    ben_file = tmp_path / "benbot.js"
    ben_file.write_text(BEN)
    kit = arena_here("new", "--lang", "cpp", "catbot", cwd=tmp_path)
    assert kit.returncode == 0, kit.stderr
    cpp = tmp_path / "catbot" / "bot.cpp"
    ready = 'if (type == "\\"start_game\\"") {'
    assert ready in cpp.read_text()
    cpp.write_text(cpp.read_text().replace(ready, f'{ready} std::cerr << "{PRIVATE["cat"]}" << std::endl;', 1))

    server = Server(folder, "--check-workers", "2")
    server.start()
    try:
        # -- uploads: ben and cat from their terminals while ann uses the upload page ----------------------
        terminals = {
            "ben": submit(ben_file, server, tokens["ben"]),
            "cat": submit(tmp_path / "catbot", server, tokens["cat"]),
        }
        page = browser.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/login")
        page.fill("#token", tokens["ann"])
        page.click("button[type=submit]")
        page.wait_for_url("**/upload")
        page.set_input_files("#bot", str(ann_file))
        page.click("#send")
        page.wait_for_url("**/submissions/*")
        page.wait_for_selector("#status:text('clean')", timeout=BOUND * 1000)
        page.close()
        assert errors == []
        for who, proc in terminals.items():
            out = finished(proc)
            assert f"{BOTS[who]} v1: check clean" in out and f"{BOTS[who]}: clean; active on the ladder" in out, out

        # -- the ladder plays every bot; kill -9 of the server mid-ladder, and a restart ---------------
        wait_for(lambda: every_bot_played(server), "every author's bot to play ladder games")
        orphans = server.workers()
        server.kill9()
        kept = game_keys(folder)
        assert kept
        wait_for(lambda: not any(is_worker(p) for p in orphans), "the workers to notice the server is gone")
        server.start()
        assert game_keys(folder) >= kept  # every game recorded before the kill is there
        wait_for(lambda: len(game_keys(folder) - kept) >= 3, "the ladder to go on after the restart")
        assert rated_once(folder)  # and no game counted twice in the ratings

        # -- the desk: the organiser reads each version and approves it (the desk's forms) -------------
        desk = Person(server).sign_in(organiser)
        mine = {who: server.get("/api/mine", tokens[who]) for who in BOTS}
        sids = {}
        for who, (status, data) in mine.items():
            assert status == 200 and [b["name"] for b in data["bots"]] == [BOTS[who]], (who, data)
            sids[who] = data["bots"][0]["versions"][0]["id"]
        status, queue = desk.call("GET", "/desk")
        assert status == 200 and all(f'href="/desk/{sid}"' in queue for sid in sids.values())
        for who, sid in sids.items():
            status, review = desk.form(
                f"/desk/{sid}/review", {"verdict": "approved", "comment": f"thanks {who}"}, f"/desk/{sid}"
            )
            assert status == 200 and "approved" in review, (who, status)
        for who in BOTS:
            version = server.get("/api/mine", tokens[who])[1]["bots"][0]["versions"][0]
            assert version["review"] == "approved" and version["comment"] == f"thanks {who}"

        # -- a person at a table: cat sits with ann's bot and plays the game out, move by move ----------
        cat = Person(server).sign_in(tokens["cat"])
        status, table = cat.call("POST", "/api/tables", {"people": 1, "bots": ["annbot"], "limit": 10})
        assert status == 201, table
        sent, last = sit_and_play(cat.cookie(), server, table["id"])
        assert sent and last["result"] and last["record"] == f"/tables/{table['id']}/game", last
        status, record = cat.call("GET", last["record"])
        assert status == 200 and "annbot v1" in record  # in the viewer, recorded apart from the ladder

        # -- each author's dashboard: their own games and output, never another author's ---------------
        ann = Person(server).sign_in(tokens["ann"])
        people = {"ann": ann, "ben": Person(server).sign_in(tokens["ben"]), "cat": cat}
        absent = shared = 0
        for who, person in people.items():
            bot = BOTS[who]
            status, page_html = person.call("GET", "/mine")
            assert status == 200 and f'data-bot="{bot}"' in page_html
            assert not any(f'data-bot="{b}"' in page_html for b in BOTS.values() if b != bot)
            status, games = server.get(f"/api/bots/{bot}/games", tokens[who])
            assert status == 200 and games["total"] >= 1, (who, games)
            key = next(g["key"] for g in games["games"] if any(s["output"] for s in g["mine"]))
            status, listed = person.call("GET", f"/bots/{bot}")
            assert status == 200 and f'href="/games/{key}/output"' in listed, (who, key)
            status, output = person.call("GET", f"/games/{key}/output")
            assert status == 200 and PRIVATE[who] in output, (who, key)
            assert not any(PRIVATE[o] in output for o in PRIVATE if o != who), (who, key)
            status, viewer = person.call("GET", f"/games/{key}")
            seat = next(s["seat"] for g in games["games"] if g["key"] == key for s in g["mine"])
            data = json.loads(viewer.split('id="arena-data">', 1)[1].split("</script>", 1)[0])
            assert status == 200 and data["seat"] == seat  # the viewer opens at the author's own seat
            for other, other_bot in BOTS.items():  # every other author's: their output and submissions
                if other == who:
                    continue
                theirs = server.get(f"/api/bots/{other_bot}/games")[1]["games"]
                for key in [g["key"] for g in theirs if bot in {s["bot"] for s in g["seats"]}][:3]:
                    status, text = person.call("GET", f"/games/{key}/output")  # the same table: their own seat only
                    assert status == 200 and PRIVATE[who] in text and PRIVATE[other] not in text, (who, other, key)
                    shared += 1
                status, data = server.get(f"/api/submissions/{sids[other]}", tokens[who])
                assert status == 404 and PRIVATE[other] not in json.dumps(data)
                assert person.call("GET", f"/submissions/{sids[other]}")[0] == 404
            alone = without(folder, bot)  # a ladder game without a seat of theirs: no output to see
            if alone is not None:
                assert person.call("GET", f"/games/{alone}/output")[0] == 404
                assert server.get(f"/api/games/{alone}/output", tokens[who])[0] == 404
                absent += 1
        # ann's bot may have sat in every game (the ladder's tables always seat an author's bot), but
        # ben's and cat's did not; and each of them shared tables with ann's
        assert absent >= 2 and shared >= 2, (absent, shared)

        # -- round two: the field from round one's ladder (the rehearsal plays one final, after it) -----
        opened = arena_here("contest", "round", folder, "--field", "2", "--no-final")
        assert opened.returncode == 0 and "round 2 is open" in opened.stdout, opened.stderr
        status, data = server.get("/api/leaderboard")
        assert status == 200 and data["round"] == 2 and sum(b["field"] for b in data["bots"]) == 2
        # ann's new version, from her terminal this time, plays the field; the organiser approves it
        ann_file.write_text(ANN.replace('print("ann-private-print")', 'print("ann-private-print", "v2")'))
        out = finished(submit(ann_file, server, tokens["ann"]))
        assert "annbot v2: check clean" in out and "annbot: clean; active on the ladder" in out, out
        versions = server.get("/api/mine", tokens["ann"])[1]["bots"][0]["versions"]
        assert sorted(v["label"] for v in versions) == ["v1", "v2"]
        v2 = next(v for v in versions if v["label"] == "v2")
        status, _ = desk.form(f"/desk/{v2['id']}/review", {"verdict": "approved", "comment": ""}, f"/desk/{v2['id']}")
        assert status == 200

        def gauntlet() -> bool:
            bots = server.get("/api/leaderboard")[1]["bots"]
            return any(b["bot"] == "annbot" and b["version"] == 2 and b["games"] > 0 for b in bots)

        wait_for(gauntlet, "ann's round-two version to play the field")

        # -- the final, frozen, small; published with the contest's name and every author's bot -------
        final = run_process(
            "contest", "final", str(folder), "--freeze", "--entrants", "annbot.v2,benbot,catbot",
            "--players", "2", "--games", "1", "-j", "2",
            timeout=BOUND * 2,
            cwd=ROOT,
        )  # fmt: skip
        said = final.stdout + final.stderr
        assert final.returncode == 0, said
        assert f"the final of round two in {folder}: annbot.v2 (ann), benbot (ben), catbot (cat)" in said, said
        assert "published:" in said, said
        site = folder / "final" / "2" / "site"
        index = (site / "index.html").read_text()
        assert "Rehearsal Cup" in index and all(b in index for b in ("annbot.v2", "benbot", "catbot"))
        assert len(list((site / "bots").glob("*.html"))) == 3 and list((site / "games").glob("*.js"))
        status, served = server.get("/final/2/")
        assert status == 200 and "Rehearsal Cup" in served
        assert server.get("/api/leaderboard")[1]["finals"] == [2]
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]
