"""No page arena writes can be made to run script (issue 17, item 2).

Every page (the replay viewer, the report's index, bot and games pages and its
viewer, the browser seat) is built from data whose every text and number field
holds markup, script, template syntax, a ``javascript:`` URL and the JavaScript
line separators. The page-level data objects are built here directly, not read
from a database or a record: the pages must be safe on their own, whatever the
loaders before them check. Then Chromium opens each page: no script of the
payload runs, no dialog opens, no console error, and the payload reads as text.
A static test keeps HTML out of the Python code: it is made by templates only.
"""

from __future__ import annotations

import ast
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import quote

import pytest

from arena import play as play_match
from arena.records.files import read_games
from arena.report.charts import heat_map, interval_chart
from arena.report.pages import bot_page, file_name, games_page, index_page
from arena.report.site import BotStats
from arena.tournament.db.read import BotRow, Stored
from arena.tournament.plan.schedule import GameKey
from arena.tournament.results.finished import GameResult, SeatResult
from arena.tournament.results.resultset import ResultSet
from arena.trust.text import escape
from arena.web.render import embed_json, environment, num, render
from arena.web.serve import play_page
from arena.web.view import game_script, render_viewer, viewer_game

WEB = Path(__file__).resolve().parents[2] / "arena" / "web"
#: The Python modules that make pages: the web layer and the report.
PAGE_MODULES = sorted([*WEB.glob("*.py"), *(WEB.parent / "report").glob("*.py")])

#: Each piece would run script, forge markup or be evaluated if it reached the page unescaped.
PIECES = (
    "</script><script>window.__pwned=1</script>",
    '"><img src=x onerror="window.__pwned=1">',
    "'><svg onload='window.__pwned=1;alert(1)'>",
    "</title></style></textarea><b>bold</b><!--",
    "javascript:window.__pwned=1",
    "{{7*7}}{% raw %}${7*7}",
    "]]><x>",
)
#: U+2028 and U+2029 end a line in older JavaScript engines: inside a string literal, a syntax error.
P = " ".join(PIECES) + " \u2028 \u2029 &amp; end"


def payload(tag: str) -> str:
    """The payload with a tag, so each field's text can be found on the page (a path's tag last: a
    file is shown by its name)."""
    return f"{P}:{tag}" if tag.startswith("path") else f"{tag}:{P}"


def shown(text: str) -> str:
    """How a page shows text: its unprintable characters (U+2028 and U+2029 here) as visible
    escapes (arena.trust.text.escape), everything else as it is."""
    return escape(text)


# ---------------------------------------------------------------- page data, every field hostile


def hostile_key(tag: str) -> GameKey:
    return GameKey(payload(tag + "-size"), payload(tag + "-table"), payload(tag + "-deal"), payload(tag + "-rot"))


def standings_row(label: str, hostile: bool) -> dict[str, object]:
    if not hostile:
        return {
            "bot": label,
            "kind": "file",
            "rank": 2,
            "games": 3,
            "wins": 1,
            "losses": 1,
            "avg_place": 1.5,
            "score": 0.5,
            "score_ci": 0.25,
            "mu": 25.0,
            "sigma": 8.0,
            "ordinal": 1.0,
            "faults": 0,
            "retired": 0,
        }
    fields = ("rank", "games", "wins", "losses", "avg_place", "score", "score_ci", "mu", "sigma", "ordinal")
    row: dict[str, object] = {f: payload(f) for f in fields}
    row.update(bot=label, faults=payload("faults"), retired=payload("retired"))
    row.update(kind=payload("kind"), author=payload("author"))
    return row


def report_data() -> dict[str, object]:
    """The data objects the report's pages are built from, every field hostile."""
    labels = [payload("label0"), payload("label1")]
    key = hostile_key("key")
    scope = {
        "games": payload("scope-games"),
        "blocks": payload("scope-blocks"),
        "standings": [standings_row(labels[0], True), standings_row(labels[1], False)],
        "head_to_head": {
            labels[0]: {labels[1]: {"above": payload("above"), "games": payload("h2h-games")}},
            labels[1]: {labels[0]: {"above": 0.75, "games": payload("h2h-games")}},
        },
    }
    pair = {"upper": labels[0], "lower": labels[1], "blocks": payload("blocks"), "diff": payload("diff")}
    pair.update(diff_lo=payload("lo"), diff_hi=payload("hi"), p_value=payload("p"), verdict=payload("verdict"))
    separation = {"method": payload("method"), "compares": payload("compares"), "confidence": payload("conf")}
    separation["pairs"] = [pair]
    doc = {"overall": scope, "by_size": {payload("size"): scope, "3": scope}, "separation": separation}
    bots = [
        BotRow(0, labels[0], payload("name0"), payload("path0"), payload("origin"), payload("sha0")),
        BotRow(1, labels[1], payload("name1"), None, payload("origin"), payload("sha1")),
    ]
    game = {
        "key": key,
        "seat": payload("seat"),
        "place": payload("place"),
        "score": payload("score"),
        "loser": False,
        "faults": payload("g-faults"),
        "retired": False,
    }
    plain = dict(game, key=GameKey(3, 0, 0, 0), seat=1, place=2, score=10)
    fault = {"key": key, "seat": payload("f-seat"), "round": payload("round"), "kind": payload("kind")}
    fault["detail"] = payload("detail")
    stats = [
        BotStats(bots[0], payload("author"), [game, plain], [fault] * 3, moves=payload("moves"), timed=True),
        BotStats(bots[1], None, [plain], [], moves=7, seconds=payload("seconds"), worst=0.5, timed=True),
    ]
    hostile_seats = (SeatResult(0, payload("p0"), payload("s0"), False, 0, False), SeatResult(1, 1, 5, False, 0, False))
    plain_seats = (SeatResult(1, 1, 0, False, 0, False), SeatResult(0, 2, 40, False, 0, False))
    stored = [
        GameResult(key, hostile_seats, payload("seed"), payload("rounds"), payload("m")),  # type: ignore[arg-type]
        GameResult(GameKey(3, 0, 0, 0), plain_seats, 1, 6, 90),
    ]
    settings = {"rules": {"name": payload("rules")}, "sizes": [payload("sizes"), 3], "games": payload("deals")}
    results = ResultSet(Stored(settings, bots, {}, stored, {}), doc)
    context = {
        "settings": settings,
        "results": results,
        "db": payload("db"),
        "created": payload("created"),
        "arena_version": payload("version"),
    }
    return {
        "doc": doc,
        "stats": stats,
        "labels": labels,
        "stored": stored,
        "found": {key, GameKey(3, 0, 0, 0)},
        "notes": {key: payload("note")},
        "context": context,
    }


def hostile_events(path: Path) -> list[list[dict[str, object]]]:
    """Two games of a real record: the first with every text hostile (names, id, rules, say
    lines and faults added), the second with every number hostile as well."""
    play_match(["greedy", "random"], games=1, seed=7, record_file=str(path), trusted=True)
    events = next(read_games(path))
    texts = [dict(e) for e in events]
    texts[0] = dict(texts[0], game=payload("game"), rules=dict(texts[0]["rules"], name=payload("rules")))
    texts[0]["players"] = [dict(p, name=payload(f"player{p['seat']}"), bot=payload("bot")) for p in texts[0]["players"]]
    extra = [
        {"event": "say", "seat": 0, "text": payload("say")},
        {"event": "fault", "seat": 1, "round": 1, "kind": payload("fault-kind"), "detail": payload("fault-detail")},
    ]
    texts[3:3] = extra

    def numbers(value: object, tag: str) -> object:
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int | float):
            return payload(tag)
        if isinstance(value, dict):
            return {k: numbers(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [numbers(v, tag) for v in value]
        return value

    both = [numbers(e, "n") for e in texts]
    both[0] = dict(both[0], game=payload("game2"))
    return [texts, both]


# ---------------------------------------------------------------- building the pages


def build_pages(folder: Path) -> dict[str, Path]:
    """Every kind of page, written into ``folder``; returns them by name."""
    games = hostile_events(folder / "g.jsonl")
    pages: dict[str, Path] = {}

    def write(name: str, text: str) -> None:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        pages[name] = path

    shown = [viewer_game(g) for g in games]
    write("view.html", render_viewer(shown, title=payload("title")))
    write("seat.html", render_viewer([viewer_game(games[0], seat=0)], title=payload("title"), seat=0))
    d = report_data()
    write("site/index.html", index_page(d["doc"], d["stats"], d["context"]))
    write("site/games.html", games_page(d["stored"], d["labels"], d["found"], d["notes"], d["context"]))
    for s in d["stats"]:
        write(f"site/bots/bot-{s.bot.bot}.html", bot_page(s, d["doc"], d["labels"], d["found"], d["context"]))
    listed = [{"id": f"g{i}", "label": payload(f"list-label{i}"), "summary": payload(f"summary{i}")} for i in (1, 2)]
    write("site/viewer.html", render_viewer(listed, title=payload("title"), src="games/", back=("index.html", P)))
    write("site/games/g1.js", game_script({"id": "g1", "events": games[0]}))
    write("play.html", play_page(payload("token")))
    return pages


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return build_pages(tmp_path_factory.mktemp("payloads"))


class Watched:
    """A page that records console errors, uncaught exceptions and dialogs."""

    def __init__(self, browser) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.page = self.context.new_page()
        self.page.set_default_timeout(10_000)
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def check(self, where: str, scripts: int) -> str:
        """Nothing of the payload ran or became markup; returns the page's text."""
        p = self.page
        assert p.evaluate("typeof window.__pwned") == "undefined", where
        assert self.dialogs == [] and self.errors == [], (where, self.dialogs, self.errors)
        injected = "img, b, x, textarea, [onerror], [onload], svg[onload], a[href^='javascript']"
        assert p.locator(injected).count() == 0, where
        assert p.locator("script").count() == scripts, where
        return str(p.evaluate("document.body.innerText"))


#: A bot's file is shown by its name alone (docs/RULINGS.md 138): the payload past its last "/", hostile still.
SHOWN_AS = {"path0": file_name(payload("path0"))}
assert "<!--" in SHOWN_AS["path0"] and "path0" in SHOWN_AS["path0"]


def test_report_pages_show_every_hostile_field_as_text(browser, pages):
    seen = Watched(browser)
    expect = {
        "site/index.html": ["label0", "label1", "rank", "games", "wins", "losses", "avg_place", "score", "score_ci"]
        + ["mu", "sigma", "ordinal", "faults", "retired", "scope-games", "scope-blocks", "size", "rules", "sizes"]
        + ["deals", "db", "created", "version", "author", "kind", "method", "compares", "verdict", "blocks", "conf"]
        + ["diff", "lo", "hi", "p"],
        "site/games.html": ["key-size", "key-table", "key-deal", "key-rot", "label0", "label1", "p0", "s0"]
        + ["rounds", "m", "note"],
        "site/bots/bot-0.html": ["label0", "author", "name0", "path0", "sha0", "rank", "score", "avg_place", "kind"]
        + ["detail", "round", "key-size", "seat", "place"],
        "site/bots/bot-1.html": ["label1", "name1", "sha1"],
    }
    for name, tags in expect.items():
        seen.page.goto(pages[name].as_uri())
        text = seen.check(name, scripts=0)
        policy = seen.page.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
        assert policy is not None and policy.startswith("default-src 'none';"), name  # no script, even injected
        missing = [t for t in tags if shown(SHOWN_AS.get(t, payload(t))) not in text]
        assert missing == [], (name, missing)
        # the charts: labels as text in SVG, no markup made of them
        for title in seen.page.eval_on_selector_all("svg title", "els => els.map(e => e.textContent)"):
            assert "<" not in title or shown(P) in title, title
    seen.context.close()


def test_viewers_show_every_hostile_field_as_text(browser, pages):
    seen = Watched(browser)
    p = seen.page
    for name in ("view.html", "seat.html"):
        p.goto(pages[name].as_uri() + "#game=" + quote(shown(payload("game")), safe="") + "&step=5")
        p.wait_for_selector(".seat")
        text = seen.check(name, 2)
        assert p.title() == shown(payload("title"))
        for tag in ("player0", "player1", "say"):
            assert shown(payload(tag)) in text, (name, tag)
    # the second game: every number hostile too
    p.goto(pages["view.html"].as_uri() + "#game=" + quote(shown(payload("game2")), safe="") + "&step=end")
    p.wait_for_selector("#status:has-text('well-formed')")
    text = seen.check("view.html, hostile numbers", 2)
    assert shown(payload("game2")) in text and "the record is not a well-formed game" in text
    # the report's viewer: the game list embedded, the game loaded from its script file
    p.goto(pages["site/viewer.html"].as_uri() + "#game=g1&step=5")
    p.wait_for_selector(".seat")
    text = seen.check("site/viewer.html", 3)
    for tag in ("list-label1", "summary1", "list-label2", "summary2", "player0", "say"):
        assert shown(payload(tag)) in text, tag
    assert shown(P) in p.locator("a.back").inner_text()
    seen.context.close()


def test_the_seat_page_takes_its_token_as_data(browser, pages):
    seen = Watched(browser)
    p = seen.page
    # the page is served as the seat's server would; its state requests are left waiting
    p.route("http://seat.test/", lambda r: r.fulfill(body=pages["play.html"].read_bytes(), content_type="text/html"))
    p.route("http://seat.test/*/**", lambda r: None)
    p.goto("http://seat.test/")
    seen.check("play.html", 1)
    assert p.evaluate("ARENA_TOKEN") == shown(payload("token"))
    seen.context.close()


# ---------------------------------------------------------------- without a browser

#: String literals in arena/web/*.py that may hold markup, by module and the literal's first characters.
MARKUP_ALLOWED = {
    ("render.py", '<meta name="generator"'),  # GENERATOR: the mark of arena's own pages, a constant
}
TAG = re.compile(r"<\s*/?\s*[A-Za-z!]")


def literals(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module, f-string parts included, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_no_python_module_of_the_web_layer_writes_markup():
    # HTML is made by templates only: a tag in a Python string is a page built by hand.
    found = [
        f"{path.name}:{line}: {text[:40]!r}"
        for path in PAGE_MODULES
        for line, text in literals(path)
        if TAG.search(text) and not any(path.name == m and text.startswith(s) for m, s in MARKUP_ALLOWED)
    ]
    assert found == []
    # Only the render module marks text as safe markup; templates never turn escaping off.
    for path in PAGE_MODULES:
        calls = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)]
        named = [c.lineno for c in calls if isinstance(c.func, ast.Name) and c.func.id == "Markup"]
        assert path.name == "render.py" or named == [], f"{path.name}:{named} makes Markup"
    for path in sorted((WEB / "templates").iterdir()):
        text = path.read_text()
        assert not re.search(r"\|\s*safe\b|autoescape\s+false|Markup", text), path.name


def test_the_environment_escapes_everything_and_knows_every_name():
    env = environment()
    assert env.autoescape is True and env.undefined.__name__ == "StrictUndefined"
    assert env.from_string("{{ x }}", globals={}).render(x="<b>&'\"") == "&lt;b&gt;&amp;&#39;&#34;"
    with pytest.raises(Exception, match="undefined"):
        render("report_games.html.j2", title="t", up="")  # `games` missing: an error, never an empty page
    text = "</script><!-- <script>alert(1)</script> & ' \u2028 \u2029"
    made = embed_json({"say": text})
    assert not any(c in made for c in "<>&'\u2028\u2029") and made.isascii()
    assert json.loads(made) == {"say": shown(text)}  # the text as pages show it
    bidi = "\u202e\x1b]52;c;aGk=\x07 \ud800 caf\u00e9 \u2663"
    assert json.loads(embed_json({bidi: [bidi, (1, None)]})) == {shown(bidi): [shown(bidi), [1, None]]}
    assert shown(bidi) == "\\u202e\\x1b]52;c;aGk=\\x07 \\ud800 caf\u00e9 \u2663"  # printable text kept
    assert env.from_string("{{ x }}").render(x=bidi) == shown(bidi)  # and so does every template


def test_numbers_are_formatted_from_real_numbers_only():
    assert num(2.5, ".2f") == "2.50" and num(3) == "3" and num(None) == "\u2013"
    # anything else is text (escaped by the template), never formatted as a number
    assert num("1e3", ".2f") == "1e3" and num(True, ".2f") == "True" and num(float("nan"), ".2f") == "nan"
    assert num(10**5000) == "(a value too long to show)"


def test_charts_take_no_attribute_from_their_data():
    # Every attribute of the charts is a number, a colour or a constant of charts.py: a value
    # that is not a finite number is drawn as missing, never written into the markup.
    rows = [(P, P, P), (P, 0.5, P), (P, float("nan"), 0.1), ("b", 0.25, 0.125), ("c", None, None)]
    charts = [
        interval_chart(rows, lo=P, hi=1, ticks=(0, P, 0.5, float("inf")), title=P),
        heat_map([P, "b", "c"], {(0, 1): (P, P), (1, 0): (0.75, P), (1, 2): (1, 3), (2, 1): (0.25, 3)}, title=P),
    ]
    number = re.compile(r"-?\d+(\.\d+)?$")
    constants = {"chart-box", "chart", "chart heat", "100%", "img", "middle", "end", "http://www.w3.org/2000/svg"}
    constants |= {"grid", "tick", "label", "ci", "dot", "diag", "none", "cell", "cell-text"}
    for chart in charts:
        root = ET.fromstring(str(chart))
        for node in root.iter():
            for name, value in node.attrib.items():
                if name == "aria-label":
                    assert value == shown(P)
                elif name == "viewBox":
                    assert all(number.match(v) for v in value.split())
                elif name == "style":
                    assert re.fullmatch(r"max-width:\d+px", value)
                elif name == "fill":
                    assert re.fullmatch(r"#[0-9a-f]{6}", value)
                else:
                    assert number.match(value) or value in constants, (name, value)
        titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
        assert any(shown(P) in (t or "") for t in titles)
