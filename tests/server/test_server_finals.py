"""The announced contest from the command line alone (issue 29, items 3 and 4): round one, its final
(configured), round two with `--rule limit=100`, and the final after round two (configured) are
played and published; each final's site carries the contest's name, the authors, the round and its
rules, ties as ties; round two without a published round-one final is refused unless --no-final.
(The authors' uploads and the desk's approvals are stored as the server stores them: the server's
own tests play those.)"""

from __future__ import annotations

import re
import sqlite3
import warnings
from pathlib import Path

import pytest
from support.server import ROOT, arena

from arena.server.contest import final, lineup, rounds
from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.store import database as store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


GREEDY = (ROOT / "bots" / "greedy.py").read_text()


def upload(db: sqlite3.Connection, author: str, bot: str) -> int:
    """An author's upload, clean and approved: twins of one deterministic bot (they tie exactly)."""
    row = db.execute("SELECT id FROM authors WHERE name = ?", (author,)).fetchone()
    aid = int(row[0]) if row else int(store.invite(db, author).split(".")[0][1:])
    sid = store.add_submission(db, aid, bot, GREEDY.replace('name = "greedy"', f'name = "{bot}"').encode())
    store.finish_check(db, sid, {"clean": True}, None)
    store.review(db, sid, "approved", "")
    return sid


def ok(*args: str) -> str:
    done = arena(*args, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def refused(why: str, *args: str) -> None:
    done = arena(*args, timeout=120)
    assert done.returncode == 2 and why in done.stderr and done.stderr.count("\n") == 1, done.stderr


def site(folder: Path, number: int) -> str:
    return (final.home(folder, number) / "site" / "index.html").read_text()


@pytest.mark.long
def test_the_announced_contest_runs_and_publishes_from_the_command_line(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    made = ok("contest", "init", str(folder), "--name", "Cup 2012", "--house", "random")
    assert "house bots (the organiser's own AI, on the ladder): random" in made
    db = store.open_db(folder)
    upload(db, "ann", "annbot")
    upload(db, "ben", "benbot")
    db.close()
    d = str(folder)

    # round two is never opened silently without round one's final
    refused("the round-one final has not been published", "contest", "round", d, "--field", "2")
    refused("freeze submissions first (Freeze on the desk, or --freeze)", "contest", "final", d, "--games", "2")
    refused("--top goes with --until-separated", "contest", "final", d, "--games", "2", "--top", "1")
    refused("no entrant of round 1's final", "contest", "final", d, "--entrants", "annbot,nosuch", "--freeze")
    db = store.open_db(folder)
    assert store.setting(db, "frozen") == "0"  # a final refused freezes nothing
    db.close()

    # round one's final, configured: the two authors' bots at 2-player tables, 2 deals, no house bot
    out = ok("contest", "final", d, "--freeze", "--players", "2", "--games", "2", "--no-house", "-j", "1")
    assert "playing the final of round one in" in out and "annbot (ann), benbot (ben)" in out
    assert "settings: tables of 2; 2 deals a table; house bots left out" in out
    assert f"published: {final.home(folder, 1) / 'site'}/index.html (served at /final/1/)" in out
    assert "no champion is named: annbot, benbot share first place" in out
    one = site(folder, 1)
    assert "<title>Cup 2012: final of round one</title>" in one and "Yard bridge tournament" not in one
    assert ">ann<" in one and ">ben<" in one and "rules contest;" not in one and "rules contest." in one
    ranked = re.findall(r'<tr data-bot="(\w+)" data-rank="(\d)"', one)[:2]  # a shared rank: listed by rating, then name
    assert sorted(ranked) == [("annbot", "1"), ("benbot", "1")]
    assert "not separated from the next at 95%" in one and "Champion:" not in one
    assert str(tmp_path) not in "".join(p.read_text() for p in (final.home(folder, 1) / "site").rglob("*.html"))
    refused("is published; it is kept as it was run", "contest", "final", d, "--games", "3")

    # round two, its rule tweaked, its field from the published final; a new author's bot
    out = ok("contest", "round", d, "--field", "2", "--rule", "limit=100")
    assert "rules contest, limit=100" in out and "the round-one final's standings" in out
    db = store.open_db(folder)
    assert rounds.get_round(db).rules.limit == 100 and store.setting(db, "frozen") == "0"
    upload(db, "cat", "catbot")
    pool = [e.label for e in lineup.pool(db, 2)]
    db.close()
    assert pool == ["annbot", "benbot", "catbot", "random"]
    refused("round two is open: the round-one final is kept as it was run", "contest", "final", d, "--round", "1")

    # the final after round two, configured: until separated at 2-player tables, a small budget
    out = ok("contest", "final", d, "--freeze", "--players", "2", "--until-separated", "--budget", "24", "-j", "1")
    assert "playing the final of round two" in out and "random (house)" in out and "catbot (cat)" in out
    two = site(folder, 2)
    assert "<title>Cup 2012: final of round two</title>" in two
    assert "rules contest, changed: limit = 100" in two and ">cat<" in two and "house bot" in two
    assert "authors&#39; rank" in two and "data-champion" in two
    verdicts = re.findall(r'data-verdict="([^"]+)"', two)
    assert verdicts and ("Champion:" in two if all(v == "separated" for v in verdicts) else "Champion:" not in two)
    db = store.open_db(folder)
    assert final.published(db) == [1, 2]
    assert final.settings_of(final.state(db, 2)) == final.FinalSettings(players=(2,), budget=24)
    db.close()
    with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
        index = client.get("/final/").text
        assert 'href="/final/1/"' in index and 'href="/final/2/"' in index
        board = client.get("/").text
        assert 'href="/final/1/"' in board and 'href="/final/2/"' in board
        assert "Cup 2012: final of round two" in client.get("/final/2/").text
        assert "A bot listed twice" not in board  # no author uploaded a new version of a field bot


@pytest.mark.long
def test_a_final_that_stopped_resumes_with_its_own_settings(tmp_path: Path) -> None:
    # A final begun and stopped (its process gone) runs again with the settings it was begun with;
    # other settings are refused in one line, and --restart clears it once its folder is moved away.
    folder = tmp_path / "cup"
    ok("contest", "init", str(folder), "--house", "none")
    db = store.open_db(folder)
    upload(db, "ann", "annbot")
    upload(db, "ben", "benbot")
    store.set_setting(db, "frozen", "1")

    def stopped(settings: final.FinalSettings) -> None:  # begun, then its process died
        assert lineup.begin(db, 1, settings)[0] is None
        final.update_state(db, 1, pid=2**22 + 12345)  # no such process
        assert final.current_state(db, 1) == "interrupted"

    d = str(folder)
    stopped(final.FinalSettings(players=(2,), until_separated=False, games=1))
    refused("was begun with other settings (tables of 2; 1 deal a table)", "contest", "final", d, "--games", "3")
    final.home(folder, 1).mkdir(parents=True)
    refused("exists: move it away first (nothing recorded is deleted)", "contest", "final", d, "--restart")
    final.home(folder, 1).rmdir()
    assert "the round-one final is cleared" in ok("contest", "final", d, "--restart")
    assert final.state(db, 1) == {}
    stopped(final.FinalSettings(players=(2,), until_separated=False, games=2))
    db.close()
    out = ok("contest", "final", d, "-j", "1")
    assert "resuming the final of round one" in out and "settings: tables of 2; 2 deals a table" in out
    assert "share first place" in out
    refused("is published: it is not cleared", "contest", "final", d, "--restart")


def test_arena_contest_help_names_every_action() -> None:
    import argparse

    from arena.cli import COMMANDS, build_parser
    from arena.cli.contest import ACTIONS

    parser = build_parser("contest")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    contest = sub.choices["contest"]
    actions = next(a for a in contest._actions if isinstance(a, argparse._SubParsersAction))
    names = list(actions.choices)
    assert names == ACTIONS.split(", ")  # in the order the help lists them
    helped = contest.format_help()
    assert all(f"    {name} " in helped for name in names) and all(name in contest.description for name in names)
    assert all(name in dict(COMMANDS)["contest"] for name in names)  # arena --help's line too
