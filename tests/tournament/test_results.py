"""One results model (issue 18, items 3 and 9): one finished-game type, one standings loader
for ``arena standings``, ``arena tournament`` and ``arena report``; the report's header counts
what was planned, shows authors and the separation verdicts, reads on a phone; a gauntlet ranks
by the paired verdict against the field (docs/RULINGS.md, ruling 68)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.browser import chromium
from support.cli import arena_here as arena

from arena.tournament.db.read import BotRow, Stored
from arena.tournament.plan.schedule import GameKey
from arena.tournament.results.finished import GameResult, SeatResult
from arena.tournament.results.resultset import results_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def ok(cwd: Path, *args: str) -> str:
    done = arena(*args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def summary(site: Path) -> str:
    m = re.search(r'<p class="meta summary">([^<]*)', (site / "index.html").read_text())
    assert m is not None
    return m.group(1)


def report_order(site: Path) -> list[str]:
    """The bots of the report's overall standings, in their order."""
    section = (site / "index.html").read_text().split('<section class="scope"')[1]
    return re.findall(r'<tr data-bot="([^"]*)" data-rank', section)


def standings_json(cwd: Path, db: str) -> dict:
    return json.loads(ok(cwd, "standings", db, "--json"))


# -- the one finished-game type ------------------------------------------------------------


def test_a_fresh_game_and_its_stored_row_are_one_value(tmp_path: Path) -> None:
    """What a worker sends back and what the database gives back compare equal (row id aside)."""
    from dataclasses import replace

    from arena.game.rules import Rules
    from arena.tournament.backends.games import GameRunner
    from arena.tournament.db.read import load, open_readonly
    from arena.tournament.runner import plan

    ok(tmp_path, "tournament", "greedy", "random", "heuristic", "-k", "3", "-n", "1", "--seed", "5")
    conn, meta = open_readonly(tmp_path / "tournament.sqlite")
    try:
        stored = load(conn, meta).games
    finally:
        conn.close()
    p = plan(["greedy", "random", "heuristic"], sizes=[3], deals=1, seed=5, rules=Rules(), trusted=True)
    runner = GameRunner(p.job())
    fresh = [runner.play(g.key).result() for g in stored]
    assert [replace(g, id=0) for g in stored] == fresh
    assert all(isinstance(s, SeatResult) for g in stored for s in g.seats)


# -- a gauntlet ranks by the paired verdict against the field --------------------------------


def gauntlet_stored(blocks: int, wins_vs_strong: int) -> Stored:
    """NEW (bot 0) against STRONG (1) and WEAK (2) at 2-player tables, ``blocks`` deals each:
    NEW always beats WEAK, and beats STRONG in ``wins_vs_strong`` of the deals (both seatings)."""
    games = []
    for table, field in enumerate((1, 2)):
        for deal in range(blocks):
            new_wins = field == 2 or deal < wins_vs_strong
            for rot in range(2):
                seats = [(0, 1 if new_wins else 2), (field, 2 if new_wins else 1)]
                if rot:
                    seats.reverse()
                key = GameKey(2, table, deal, rot)
                games.append(GameResult(key, tuple(SeatResult(b, p, 0, p == 2, 0, False) for b, p in seats)))
    settings = {"seed": 1, "sizes": [2], "games": blocks, "schedule": {"2": "gauntlet"}, "rules": {}}
    bots = [BotRow(i, name, name, None, "registry", "0" * 64) for i, name in enumerate(("NEW", "STRONG", "WEAK"))]
    return Stored(settings, bots, {2: ((0, 1), (0, 2))}, sorted(games, key=lambda g: g.key), {})


def test_a_gauntlet_does_not_rank_the_new_bot_first_on_raw_score() -> None:
    """The attack: NEW's raw score (0.74) is padded by the weak bot it met, STRONG's (0.52) comes
    from NEW alone; NEW lost 13 of 25 shared deals to STRONG (head-to-head 0.48), not separated."""
    results = results_of(gauntlet_stored(25, 12))
    rows = results.doc["overall"]["standings"]
    by = {r["bot"]: r for r in rows}
    assert by["NEW"]["score"] > by["STRONG"]["score"]  # what ranked it first before
    pairs = {p["lower"]: p for p in results.doc["separation"]["pairs"]}
    assert pairs["STRONG"]["verdict"] == "not separated" and pairs["WEAK"]["verdict"] == "better"
    assert [r["bot"] for r in rows] == ["STRONG", "NEW", "WEAK"]
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert results.doc["by_size"]["2"]["standings"] == rows


def test_a_gauntlet_ranks_the_new_bot_above_what_it_beat() -> None:
    results = results_of(gauntlet_stored(25, 20))
    assert [r["bot"] for r in results.doc["overall"]["standings"]] == ["NEW", "STRONG", "WEAK"]
    assert all(p["verdict"] == "better" for p in results.doc["separation"]["pairs"])
    # and a field bot it did not beat stays above it even when NEW's raw score is higher
    losing = results_of(gauntlet_stored(25, 5))
    assert [r["bot"] for r in losing.doc["overall"]["standings"]] == ["STRONG", "NEW", "WEAK"]


# -- the report and the standings, from the one loader ---------------------------------------


@pytest.fixture(scope="module")
def gauntlet_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("g")
    ok(folder, "tournament", "greedy", "--gauntlet", "random", "heuristic", "-k", "2", "-n", "6", "--db", "g.sqlite")
    ok(folder, "report", "--db", "g.sqlite", "--out", "site", "-q")
    return folder


def test_a_gauntlet_report_counts_its_own_schedule(gauntlet_site: Path) -> None:
    doc = standings_json(gauntlet_site, "g.sqlite")
    text = summary(gauntlet_site / "site")
    assert doc["games"] == doc["total"] == 2 * 6 * 2
    assert f"{doc['games']} of {doc['total']} games played" in text
    assert "a gauntlet of greedy against a field of 2" in text
    assert report_order(gauntlet_site / "site") == [r["bot"] for r in doc["overall"]["standings"]]


def test_the_report_shows_the_separation_verdicts_of_the_standings(gauntlet_site: Path) -> None:
    doc = standings_json(gauntlet_site, "g.sqlite")
    page = (gauntlet_site / "site" / "index.html").read_text()
    shown = re.findall(r'data-upper="([^"]*)" data-lower="([^"]*)" data-verdict="([^"]*)"', page)
    assert shown == [(p["upper"], p["lower"], p["verdict"]) for p in doc["separation"]["pairs"]]
    assert "A gauntlet: the field is ranked by score" in page


def test_an_adaptive_report_does_not_claim_a_fixed_schedule(tmp_path: Path) -> None:
    ok(tmp_path, "tournament", "greedy", "random", "-k", "2", "--until-separated", "--budget", "40", "--db", "a.sqlite")
    ok(tmp_path, "report", "--db", "a.sqlite", "--out", "site", "-q")
    doc = standings_json(tmp_path, "a.sqlite")
    text = summary(tmp_path / "site")
    first = 2  # one table of 2, one deal, two seatings
    assert f"{doc['games']} games played in an adaptive run (a first round of {first} games" in text
    assert " of " not in text.split(" games played")[0]  # no "N of M": nothing fixed was planned
    assert "deals per table" not in text


def test_the_report_names_authors_and_kinds_as_the_standings_do(tmp_path: Path) -> None:
    bot = tmp_path / "counter.py"
    bot.write_text((EXAMPLES / "counter.py").read_text())
    ok(tmp_path, "submit", str(bot), "--to", "subs", "--author", "Ada Lovelace")
    ok(tmp_path, "tournament", "subs", "greedy", "-k", "2", "-n", "1", "-j", "1", "--db", "t.sqlite", "-q")
    ok(tmp_path, "report", "--db", "t.sqlite", "--out", "site", "-q", "-j", "1")
    page = (tmp_path / "site" / "index.html").read_text()
    head = page.split('<table class="data standings"')[1].split("</thead>")[0]
    assert re.findall(r"<th[^>]*>([^<]*)</th>", head)[:4] == ["rank", "bot", "kind", "author"]
    assert '<td class="text author">Ada Lovelace</td>' in page
    assert '<td class="text kind">file</td>' in page and '<td class="text kind">built-in</td>' in page


def twins(folder: Path, names: tuple[str, ...] = ("annbot", "benbot")) -> None:
    """Copies of one deterministic bot (at duplicate deals two tie exactly) in a folder."""
    folder.mkdir()
    for name in names:
        text = (EXAMPLES.parent / "bots" / "greedy.py").read_text().replace('name = "greedy"', f'name = "{name}"')
        (folder / f"{name}.py").write_text(text)


def test_a_tie_is_shown_as_a_tie_and_no_champion_is_named(tmp_path: Path) -> None:
    # The final: two bots, 0.500-0.500, "not separated", published as rank 1 and rank 2 with
    # the first named by the page. Equal scores share a rank; a rank not separated from the next
    # says so next to it; a champion is named only when separated from the next.
    twins(tmp_path / "bots")
    ok(tmp_path, "tournament", "bots", "-k", "2", "-n", "3", "-j", "1", "--db", "t.sqlite", "-q", "--seed", "5")
    doc = standings_json(tmp_path, "t.sqlite")
    rows = doc["overall"]["standings"]
    assert [r["rank"] for r in rows] == [1, 1] and rows[0]["score"] == rows[1]["score"] == 0.5
    assert rows[0]["next"] == "not separated" and rows[1]["next"] is None and doc["champion"] is None
    ok(tmp_path, "report", "--db", "t.sqlite", "--out", "site", "-q", "-j", "1")
    page = (tmp_path / "site" / "index.html").read_text()
    assert re.findall(r'<tr data-bot="([^"]*)" data-rank="(\d+)"', page)[:2] == [("annbot", "1"), ("benbot", "1")]
    assert "not separated from the next at 95%" in page and "Champion:" not in page
    assert "No champion is named: annbot, benbot share first place" in page
    terminal = ok(tmp_path, "standings", "t.sqlite")
    assert re.search(r"^\s+1\s+annbot", terminal, re.M) and re.search(r"^\s+1\s+benbot", terminal, re.M)


def test_a_champion_is_named_when_separated_and_the_site_carries_its_title(tmp_path: Path) -> None:
    # `arena report --title` heads every page (the viewer's too), `--house` marks the organiser's own
    # bots and ranks the others among themselves; the rules changed are named; a bot's page names its
    # file, never the folders of the machine that ran the tournament.
    twins(tmp_path / "bots", ("annbot",))
    argv = ["tournament", "bots", "random", "-k", "2", "-n", "20", "-j", "1", "--db", "t.sqlite", "-q"]
    ok(tmp_path, *argv, "--seed", "3", "--rule", "limit=100")
    doc = standings_json(tmp_path, "t.sqlite")
    ok(
        tmp_path,
        "report",
        "--db",
        "t.sqlite",
        "--out",
        "site",
        "-q",
        "-j",
        "1",
        "--title",
        "Cup 2012: final",
        "--house",
        "random",
    )
    site = tmp_path / "site"
    page = (site / "index.html").read_text()
    assert "<title>Cup 2012: final</title>" in page and "Yard bridge tournament" not in page
    assert "rules contest, changed: limit = 100" in summary(site)
    assert '<tr data-bot="random" data-rank="2" data-house="1">' in page and "house bot" in page
    assert doc["champion"] == "annbot" and doc["overall"]["standings"][0]["next"] == "separated"
    assert 'data-champion="annbot">Champion: <b>annbot</b>, separated from the next at 95%' in page
    assert "authors&#39; rank" in page and '<td class="authors-rank">1</td>' in page
    for name in ("viewer.html", "games.html", "bots/bot-0.html"):
        assert "Cup 2012: final" in (site / name).read_text(), name
    assert "<h1>Cup 2012: final</h1>" in (site / "viewer.html").read_text()
    bot_pages = "".join(p.read_text() for p in (site / "bots").iterdir())
    assert str(tmp_path) not in bot_pages and "bots/annbot.py" not in bot_pages and ">annbot.py<" in bot_pages
    for bad, why in ((["--house", "nosuch"], "no bot of this tournament"), (["--title", "a\nb"], "one line")):
        done = arena("report", "--db", "t.sqlite", "--out", "site2", *bad, cwd=tmp_path)
        assert done.returncode == 2 and why in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_the_champion_line_names_the_first_only_when_separated() -> None:
    from arena.report.pages import authors_ranks, champion_line

    def doc(*rows: tuple[str, int, float, str | None], champion: str | None = None) -> dict:
        standings = [{"bot": b, "rank": r, "score": s, "games": 4, "next": n} for b, r, s, n in rows]
        return {"overall": {"standings": standings}, "champion": champion, "confidence": 0.95}

    separated = doc(("a", 1, 0.9, "separated"), ("b", 2, 0.5, "not separated"), ("c", 3, 0.4, None), champion="a")
    assert champion_line(separated, frozenset())["champion"] == "a"
    level = doc(("a", 1, 0.9, "not separated"), ("b", 2, 0.8, "separated"), ("c", 3, 0.1, None))
    assert champion_line(level, frozenset())["open"] == ["a", "b"] and not champion_line(level, frozenset())["shared"]
    tied = doc(("a", 1, 0.5, "not separated"), ("b", 1, 0.5, "separated"), ("c", 3, 0.1, None))
    assert champion_line(tied, frozenset())["open"] == ["a", "b"] and champion_line(tied, frozenset())["shared"]
    rows = [{"bot": b, "score": s, "games": 4} for b, s in (("h", 0.9), ("a", 0.6), ("b", 0.6), ("c", 0.2))]
    assert authors_ranks(rows, frozenset({"h"})) == {"a": 1, "b": 1, "c": 3}


# -- the report on a phone -------------------------------------------------------------------


@pytest.mark.long
def test_no_report_cell_is_narrower_than_its_words(tmp_path: Path) -> None:
    """At 390 px a long bot name keeps to one line and a game key never breaks (the table
    scrolls instead); at 1280 px the same."""

    long_names = ["the_very_patient_counting_strategist", "heuristic-with-a-long-descriptive-name"]
    for name in long_names:
        (tmp_path / f"{name}.py").write_text((EXAMPLES / "counter.py").read_text())
    ok(
        tmp_path,
        "tournament",
        *(f"{n}.py" for n in long_names),
        "greedy",
        "random",
        "-k",
        "4",
        "-n",
        "1",
        "-q",
        "--trusted",
    )
    ok(tmp_path, "report", "--db", "tournament.sqlite", "--out", "site", "-q", "-j", "1", "--trusted")
    lines = """els => els.map(e => { const r = document.createRange(); r.selectNodeContents(e);
        return new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top))).size; })"""
    with chromium() as browser:
        for width, height in ((390, 844), (1280, 800)):
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto((tmp_path / "site" / "index.html").as_uri())
            names = page.eval_on_selector_all("table.standings td.name", lines)
            assert names and all(n == 1 for n in names), (width, names)
            page.goto((tmp_path / "site" / "games.html").as_uri())
            keys = page.eval_on_selector_all("table.games td.key", lines)
            assert len(keys) == 4 and all(n == 1 for n in keys), (width, keys)
            seats = page.eval_on_selector_all("table.games .seat", lines)
            assert seats and all(n == 1 for n in seats), (width, seats)
            page.close()
