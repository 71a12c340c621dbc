"""The organiser's review desk (issue 27, items 4 and 5; issue 30, item 4): a review page renders a
view the check worker made once, bounded, and stored (never a lexer or a diff in the server's
process); each file of a bundle under its own heading, which no file's text can forge, with the
author's own line numbers and the lexer of its language; Approve for a clean check only, the comment
kept on the page; the check report's tables and faults; the queue marked by round; and the same in
Chromium, with screenshots at desktop and phone sizes."""

from __future__ import annotations

import difflib
import os
import re
import shutil
import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import DESKTOP, PHONE
from support.server import ROOT, Server, arena, token_of, wait_for

from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.routes import desk
from arena.server.store import database as store
from arena.trust.botfolder import bundle

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

#: Where the screenshots go (for a person to look at); the test's temporary folder by default.
SHOTS = os.environ.get("ARENA_SHOTS")
GREEDY = (ROOT / "bots" / "greedy.py").read_text()
CPP = (ROOT / "examples" / "kits" / "cpp" / "bot.cpp").read_bytes()
TOML = (ROOT / "examples" / "kits" / "cpp" / "bot.toml").read_bytes()
#: A header whose text imitates the old desk's file heading (and a Markdown one): code, not a file.
FORGED = b"#pragma once\n# ==== evil.py ====\n// ==== evil.cpp ====\nimport os; os.system('x')\n"


def greedy(name: str, extra: str = "") -> bytes:
    return (GREEDY.replace('name = "greedy"', f'name = "{name}"') + extra).encode()


def kit(extra: tuple[tuple[str, bytes], ...] = ()) -> bytes:
    return bundle("program", (("bot.cpp", CPP), ("bot.toml", TOML), *extra)).encode()


@pytest.fixture
def cup(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A contest (no workers: views are made here, as the check worker makes them), signed in as the organiser."""
    folder = tmp_path / "cup"
    organiser = store.init_contest(folder, "Desk Cup")
    db = store.open_db(folder)
    author = int(store.invite(db, "ann").split(".")[0][1:])
    forget()
    with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
        csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
        assert csrf
        client.post("/login", data={"token": organiser, "csrf": csrf.group(1)})
        yield {"db": db, "author": author, "client": client, "csrf": csrf_of(client)}
    db.close()


def forget() -> None:
    """Empty the server's kept review pages (a test that edits a stored view reads it again)."""
    getattr(desk, "RENDERED", {}).clear()


def prepare_view(db: sqlite3.Connection, sid: int) -> None:
    """What the check worker does after a check: make the desk's view (a server of before the
    stored views made it on each view of the page: nothing to do)."""
    try:
        from arena.server.contest.checks import prepare_view as made_once
    except ImportError:
        return
    made_once(db, sid)


def views_made(folder: Path, ids: list[int]) -> bool:
    """Whether each upload of ``ids`` has its stored view (always, for a server that stores none)."""
    db = sqlite3.connect(f"file:{folder}/contest.db?mode=ro", uri=True)
    try:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'reviews'").fetchone():
            return all(r[0] not in ("queued", "checking") for r in db.execute("SELECT status FROM submissions"))
        return all(db.execute("SELECT 1 FROM reviews WHERE submission = ?", (sid,)).fetchone() for sid in ids)
    finally:
        db.close()


def csrf_of(client: Any) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/desk").text)
    assert found
    return found.group(1)


def upload(cup: dict[str, Any], bot: str, source: bytes, report: dict[str, Any] | None = None) -> int:
    """An upload as the server stores it, checked (``report``: clean when None) and its view made."""
    db = cup["db"]
    sid = store.add_submission(db, cup["author"], bot, source)
    error = None if report is None or report.get("clean") else "the check failed: see the report"
    store.finish_check(db, sid, report or {"clean": True}, error)
    prepare_view(db, sid)
    return sid


def sections(html: str, kind: str = "file") -> list[tuple[str, str]]:
    return re.findall(rf'<section class="{kind}" data-file="([^"]*)" data-(?:language|change)="([^"]*)">', html)


def line_texts(html: str, index: int) -> list[str]:
    """The text of each line the page shows for its ``index``-th file (numbers and markup left out)."""
    import html as entities

    found = re.findall(
        rf'<span class="line" id="f{index}-L(\d+)"><span class="ln">(\d+)</span>(.*?)</span>'
        r'(?=<span class="line"|</pre>)',
        html,
    )
    assert all(a == b for a, b, _ in found) and [int(a) for a, _, _ in found] == list(range(1, len(found) + 1))
    return [entities.unescape(re.sub(r"<[^>]+>", "", body)) for _, _, body in found]


# -- each file under its own name, the author's lines, its language ------------------------------


def test_no_files_text_can_forge_a_file_heading(cup: dict[str, Any]) -> None:
    # the desk showed a bundle as one text with a "# ==== NAME ====" line before each file: a
    # file's text could hold that line and show code under a file the bundle does not have
    sid = upload(cup, "kitbot", kit((("util.h", FORGED),)))
    html = cup["client"].get(f"/desk/{sid}").text
    assert sections(html) == [("bot.cpp", "C++"), ("bot.toml", "TOML"), ("util.h", "C++")]
    assert re.findall(r'<h3 class="file-name">([^ <]+)', html) == ["bot.cpp", "bot.toml", "util.h"]
    shown = line_texts(html, 2)
    assert shown == FORGED.decode().splitlines()  # the imitation is a line of util.h, numbered as util.h's
    assert "evil.py" not in "".join(re.findall(r"<h3[^>]*>.*?</h3>", html))


def test_each_file_keeps_its_authors_line_numbers_with_tabs_expanded(cup: dict[str, Any]) -> None:
    # two header lines shifted every number off the author's file, and tabs showed as a literal "\t"
    text = (
        "\n\n// line 3\nfunction move(turn) {\n\tif (x)\t{\r\n\t\treturn 1;\r\t}\n}\n\x0c// a form feed, one line\nlast"
    )
    source = bundle("node", (("bot.js", text.encode()),)).encode()
    sid = upload(cup, "jsbot", source)
    html = cup["client"].get(f"/desk/{sid}").text
    assert sections(html) == [("bot.js", "JavaScript")] and "\\t" not in html
    expected = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # the ends compilers count
    shown = line_texts(html, 0)
    assert len(shown) == len(expected) == 10
    assert [s.replace("\\x0c", "\x0c") for s in shown] == [line.expandtabs(4) for line in expected]
    assert "\t" not in "".join(shown) and shown[4] == "    if (x)  {"


#: A file of each language the desk knows, with pieces its lexer must class (Pygments' short names).
LANGUAGE_FILES = [
    ("bot.js", "function move(turn) { const x = 1; return x; }\n", "JavaScript", {"kd": "function"}),
    ("bot.cpp", "#include <vector>\nint main() { return 0; }\n", "C++", {"cp": "#include", "kt": "int"}),
    ("bot.hpp", "#pragma once\nstruct S { int x; };\n", "C++", {"cp": "#pragma once", "kt": "int"}),
    ("bot.c", "#include <stdio.h>\nint main(void) { return 0; }\n", "C", {"cp": "#include", "kt": "int"}),
    ("bot.toml", 'name = "x"\nrun = "./bot"\n', "TOML", {"s2": '"x"'}),
    ("bot.rs", "fn main() { let x: u32 = 1; }\n", "Rust", {"kd": "let", "kt": "u32"}),
    ("bot.go", "package main\nfunc main() { var x int }\n", "Go", {"kn": "package", "kt": "int"}),
    ("Bot.java", "public class Bot { int x; }\n", "Java", {"kd": "public", "kt": "int"}),
    ("bot.py", "def move(turn):\n    return None\n", "Python", {"k": "def", "nf": "move"}),
    ("notes.txt", "def move(turn): int x;\n", "plain text", {}),
]


def test_each_file_is_highlighted_by_the_lexer_of_its_extension(cup: dict[str, Any]) -> None:
    import html as entities

    # every language was highlighted as Python (JavaScript's "function" a plain name, C++'s
    # "#include" a comment)
    files = sorted((name, text.encode()) for name, text, _, _ in LANGUAGE_FILES)
    sid = upload(cup, "polybot", bundle("program", tuple(files)).encode())
    html = cup["client"].get(f"/desk/{sid}").text
    found = sections(html)
    assert found == sorted((name, language) for name, _, language, _ in LANGUAGE_FILES)
    for index, (name, _) in enumerate(found):
        text, _, classes = next((t, lang, c) for n, t, lang, c in LANGUAGE_FILES if n == name)
        body = html.split(f'data-file="{name}"', 1)[1].split("</section>", 1)[0]
        pieces = set(re.findall(r'<span class="(\w+)">([^<]*)</span>', body.split("</h3>", 1)[1]))
        pieces = {(css, entities.unescape(text)) for css, text in pieces if css not in ("line", "ln")}
        for css, piece in classes.items():
            assert (css, piece) in pieces, (name, css, piece, pieces)
        if not classes:
            assert pieces == set(), (name, pieces)
        assert line_texts(html, index) == text.splitlines()


# -- computed once, bounded, off the server's process --------------------------------------------


def hostile_versions(lines: int = 9000) -> tuple[bytes, bytes]:
    """Two versions whose lines come from a small vocabulary in orders that make difflib's matcher
    quadratic (12.6 s for 135 KB here: the red team's 15 s a view)."""
    words = [f"value_{i:04d} = 0" for i in range(101)]
    return (
        greedy("hostbot", "\n" + "\n".join(words[i % 101] for i in range(lines)) + "\n"),
        greedy("hostbot", "\n" + "\n".join(words[(3 * i) % 101] for i in range(lines)) + "\n"),
    )


def test_a_review_page_never_lexes_or_diffs_in_the_servers_process(
    cup: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the desk recomputed an unbounded difflib diff (and the highlighting) on every view: two
    # 150 KB versions cost 15 s of the server's CPU a view; now the check worker makes the view once
    first = upload(cup, "annbot", greedy("annbot"))
    second = upload(cup, "annbot", greedy("annbot", "\n# v2: a comment\nX = 1\n"))

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a lexer or a diff in the server's process")

    import pygments.lexer

    monkeypatch.setattr(difflib.SequenceMatcher, "get_matching_blocks", refused)
    monkeypatch.setattr(pygments.lexer.Lexer, "get_tokens", refused)
    client = cup["client"]
    html = client.get(f"/desk/{second}").text
    assert sections(html, "change") == [("annbot.py", "changed")]
    assert '<span class="line add">+X = 1</span>' in html and f'href="/desk/{first}">v1</a>' in html
    assert '<span class="k">def</span>' in html  # highlighted, by the check worker
    # and a stored view of any shape is shown as far as it can be (the database is input too)
    from arena.server.store import reviews as stored_reviews

    db = cup["db"]
    for damaged in ({"format": 1, "files": [{"name": "x", "lines": [[["k", 1]]]}]}, [1], {"format": 99}):
        stored_reviews.save(db, second, damaged)  # type: ignore[arg-type]
        forget()
        answer = client.get(f"/desk/{second}")
        assert answer.status_code == 200 and 'id="plain"' in answer.text  # the files, plain, no diff
    db.execute("UPDATE reviews SET data = ? WHERE submission = ?", (b"\x78\x9c" + b"\0" * 50, second))
    forget()
    assert client.get(f"/desk/{second}").status_code == 200


def test_a_diff_past_its_bound_says_so_and_offers_both_versions(cup: dict[str, Any]) -> None:
    from arena.server.contest import review
    from arena.server.store import reviews as stored_reviews

    old, new = hostile_versions()
    db = cup["db"]
    first = upload(cup, "hostbot", old)
    second = store.add_submission(db, cup["author"], "hostbot", new)
    store.finish_check(db, second, {"clean": True}, None)
    view = review.make("hostbot", new, stored_reviews.previous(db, second), seconds=(5, 1))
    assert view["diff"]["state"] == "too-large" and view["files"][0]["lexer"] == "python"
    stored_reviews.save(db, second, view)
    html = cup["client"].get(f"/desk/{second}").text
    assert "Too large to diff" in html and f'<a href="/desk/{first}">v1\'s source</a>' in html
    assert sections(html) == [("hostbot.py", "Python")] and len(line_texts(html, 0)) == len(new.splitlines())


def test_a_file_past_the_lexers_bound_is_shown_plain() -> None:
    # one upload's first rendering must cost what an ordinary one's does: a file of 120 000 tiny
    # tokens is shown plain (its lines and numbers intact), said so
    from arena.server.contest import review

    text = "a+" * 60_000 + "\nb = 1\n"
    view = review.make("tokbot", text.encode(), None)
    (shown,) = view["files"]
    assert shown["lexer"] == "" and "past the lexer's bound" in shown["note"]
    assert ["".join(t for _, t in line) for line in shown["lines"]] == text.splitlines()


def test_a_database_of_before_the_stored_views_is_upgraded_and_filled(tmp_path: Path) -> None:
    # schema 2 had no views: it opens as schema 3, the desk shows its uploads plain at once, and the
    # check worker, when no check waits, makes their views one by one
    from arena.server.contest import review
    from arena.server.contest.checks import prepare_missing_view
    from arena.server.store import migrate
    from arena.server.store import reviews as stored_reviews

    folder = tmp_path / "old"
    folder.mkdir()
    old = sqlite3.connect(folder / "contest.db", isolation_level=None)
    old.executescript("PRAGMA journal_mode = WAL; BEGIN;" + store.SCHEMA + "COMMIT;")
    old.executemany("INSERT INTO contest VALUES (?, ?)", [("schema", "1"), ("name", "Old"), ("frozen", "0")])
    old.execute("INSERT INTO authors VALUES (1, 'ann', 'x', 0)")
    for sid, status in ((1, "clean"), (2, "failed"), (3, "queued")):
        old.execute(
            "INSERT INTO submissions (id, author, bot, version, sha256, source, created, status) "
            "VALUES (?, 1, 'annbot', ?, 's', ?, 0, ?)",
            (sid, sid, greedy("annbot", f"\nV = {sid}\n"), status),
        )
    old.close()
    db = store.open_db(folder)
    assert migrate.version(db) == migrate.LATEST == "3"
    assert {r[1] for r in db.execute("PRAGMA table_info(authors)")} >= {"disabled"}
    made = []
    while prepare_missing_view(db):
        made.append(db.execute("SELECT submission FROM reviews ORDER BY made DESC LIMIT 1").fetchone()[0])
    assert made == [1, 2]  # the checked ones, oldest first (the queued one gets its view after its check)
    view = review.shown(stored_reviews.load(db, 2))
    assert view is not None and view["previous"] == {"id": 1, "version": 1}
    assert [f["change"] for f in view["diff"]["files"]] == ["changed"]
    db.close()


# -- verdicts, comments, the report, the queue -----------------------------------------------------


REPORT = {
    "clean": False,
    "tables": [
        {"players": 2, "games": 2, "places": [1, 2], "faults": 0, "opponents": ["greedy"]},
        {"players": 3, "games": 2, "places": [3, 3], "faults": 4, "opponents": ["greedy", "random"]},
    ],
    "faults": [
        {"game": "3p-1", "seat": 0, "round": 2, "kind": "timeout", "detail": "over the per-move limit", "players": 3},
        {"game": "3p-1", "seat": 0, "round": 3, "kind": "timeout", "detail": "over the per-move limit", "players": 3},
        {"game": "3p-2", "seat": 1, "round": 1, "kind": "exception", "detail": "ZeroDivisionError", "players": 3},
        {"game": "3p-2", "seat": 1, "round": 1, "kind": "retired", "detail": "three faults", "players": 3},
    ],
    "move_time": {"moves": 40, "median_ms": 1.5, "worst_ms": 980.0},
    "problems": [],
    "warnings": [],
}


def test_approve_is_for_a_clean_check_and_the_comment_stays(cup: dict[str, Any]) -> None:
    # Approve and Reject were offered (and taken) for a failed check, and what the organiser
    # wrote was gone when a verdict could not be taken
    client, csrf = cup["client"], cup["csrf"]
    failed = upload(cup, "failbot", greedy("failbot"), REPORT)
    html = client.get(f"/desk/{failed}").text
    assert 'value="approved"' not in html and 'value="rejected"' in html
    note = "please fix the timeouts <b>first</b>"
    answer = client.post(f"/desk/{failed}/review", data={"csrf": csrf, "verdict": "approved", "comment": note})
    assert answer.status_code == 409 and "only a clean check can be approved" in answer.text
    assert "please fix the timeouts &lt;b&gt;first&lt;/b&gt;</textarea>" in answer.text  # kept as written
    view = client.get(f"/desk/{failed}").text
    assert 'id="review">pending<' in view
    answer = client.post(f"/desk/{failed}/review", data={"csrf": csrf, "verdict": "rejected", "comment": note})
    assert answer.status_code == 200 and 'id="review">rejected<' in answer.text  # after the redirect
    assert (
        "Comment sent to the author" in answer.text
        and f"{note.replace('<', '&lt;').replace('>', '&gt;')}</textarea>" in answer.text
    )
    # the report: each table size with its games, opponents, places and faults; the faults grouped
    assert '<td>3, 3</td><td class="n bad">4</td><td>vs greedy, random</td>' in answer.text
    assert "2&times; timeout</b>: over the per-move limit" in answer.text
    assert "1&times; exception</b>: ZeroDivisionError" in answer.text and "three faults" not in answer.text
    clean = upload(cup, "goodbot", greedy("goodbot"))
    assert 'value="approved"' in client.get(f"/desk/{clean}").text
    ok = client.post(f"/desk/{clean}/review", data={"csrf": csrf, "verdict": "approved", "comment": "fine"})
    assert ok.status_code == 200 and 'id="review">approved<' in ok.text


def test_the_queue_is_marked_by_round(cup: dict[str, Any]) -> None:
    db = cup["db"]
    first = upload(cup, "annbot", greedy("annbot"))
    db.execute(
        "INSERT INTO rounds SELECT 2, rules, variant, settings, 'ratings', ?, NULL, opened "
        "FROM rounds WHERE number = 1",
        (first + 1,),
    )
    second = upload(cup, "annbot", greedy("annbot", "\nX = 2\n"))
    html = cup["client"].get("/desk").text
    rows = re.findall(r'<tr data-submission="(\d+)" data-round="(\d+)">', html)
    assert rows == [(str(second), "2"), (str(first), "1")]
    assert html.index("Round 2</th>") < html.index("Round 1</th>")
    assert "round 2</span>" in cup["client"].get(f"/desk/{second}").text


# -- in Chromium: a .js upload and a C++ bundle -----------------------------------------------------


def tabbed(text: str) -> str:
    """``text`` indented with tabs (two spaces a level), as many JavaScript authors write it."""
    out = []
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        out.append("\t" * ((len(line) - len(stripped)) // 2) + stripped)
    return "\n".join(out) + "\n"


@pytest.mark.long
def test_the_desk_in_chromium_shows_each_language_and_the_authors_lines(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    organiser = token_of(
        arena("contest", "init", str(folder), "--name", "Desk Cup", "--house", "none").stdout.splitlines()[-1]
    )
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    js = tabbed((ROOT / "examples" / "shed.js").read_text())
    (tmp_path / "shed.js").write_text(js)
    folder_bot = tmp_path / "shedcpp"
    shutil.copytree(ROOT / "examples" / "kits" / "cpp", folder_bot)
    (folder_bot / "util.h").write_bytes(FORGED)
    server = Server(folder, "--ladder-workers", "0")
    server.start()
    shots = Path(SHOTS) if SHOTS else tmp_path
    try:
        for path in (tmp_path / "shed.js", folder_bot):  # as an author sends them (its check's verdict aside)
            done = arena("submit", str(path), "--server", server.url, "--token", ann)
            assert "uploaded" in done.stdout + done.stderr or done.returncode == 0, done.stdout + done.stderr
        db = store.open_db(folder)
        ids = [int(r[0]) for r in db.execute("SELECT id FROM submissions ORDER BY id")]
        db.close()
        assert len(ids) == 2
        wait_for(lambda: views_made(folder, ids), "the check worker's views")
        page = browser.new_page(viewport=DESKTOP)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/login")
        page.fill("#token", organiser)
        page.click("button[type=submit]")
        page.wait_for_url("**/desk")
        if SHOTS:
            page.screenshot(path=str(shots / "desk-queue-1280.png"), full_page=True)
        # the .js upload: JavaScript's lexer, tabs expanded, the author's numbers
        page.goto(f"{server.url}/desk/{ids[0]}")
        assert page.get_attribute("section.file", "data-language") == "JavaScript"
        code = "section.file pre.code.lang-javascript"
        keywords = page.locator(f"{code} .kd").all_inner_texts()
        assert {"function", "const", "let"} <= set(keywords), keywords
        lines = page.eval_on_selector_all(
            f"{code} .line", "els => els.map(e => [e.id, e.querySelector('.ln').textContent, e.textContent])"
        )
        expected = js.expandtabs(4).splitlines()
        assert [(i, n) for i, n, _ in lines] == [(f"f0-L{k}", str(k)) for k in range(1, len(expected) + 1)]
        assert [t[len(n) :] for _, n, t in lines] == expected
        if SHOTS:
            page.locator("section.file").first.scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "desk-js-1280.png"))
        # the C++ bundle: each file under its own name and language, a header's imitation is code
        page.goto(f"{server.url}/desk/{ids[1]}")
        files = page.eval_on_selector_all("section.file", "els => els.map(e => [e.dataset.file, e.dataset.language])")
        assert files == [["bot.cpp", "C++"], ["bot.toml", "TOML"], ["util.h", "C++"]]
        cpp = CPP.decode().splitlines()
        at = next(k for k, line in enumerate(cpp, 1) if line.startswith("#include"))
        assert page.inner_text(f"#f0-L{at} .cp") == "#include"
        assert page.inner_text(f"#f0-L{at} .ln") == str(at)
        assert "int" in page.locator("section.file >> nth=0 >> .kt").all_inner_texts()
        assert page.locator("section.file >> nth=0 >> .line").count() == len(cpp)
        assert page.inner_text("#f2-L2").endswith("# ==== evil.py ====")
        assert page.locator("h3.file-name").all_inner_texts()[-1].startswith("util.h")
        if SHOTS:
            page.screenshot(path=str(shots / "desk-cpp-1280.png"), full_page=True)
            page.set_viewport_size(PHONE)
            page.screenshot(path=str(shots / "desk-cpp-390.png"))
            page.locator("section.file").first.scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "desk-cpp-source-390.png"))
            page.goto(f"{server.url}/desk/{ids[0]}")
            page.locator("section.file").first.scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "desk-js-390.png"))
        assert errors == []
    finally:
        server.stop()
