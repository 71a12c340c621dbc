"""A round's final from the desk (issue 21 item 4, issue 29 item 3), through the app's routes and
without a browser (tests/server/test_server_browser.py keeps what only a browser proves): refused
until frozen, then run with the desk's settings by the tournament engine over the approved versions'
stored bytes and the house bot, its progress shown, published at /final/1/ with the contest's name,
the authors and the house bot marked; a final whose process is killed is resumed from the desk."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import time
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from support.server import BOUND, ROOT

from arena.server.contest import final, house
from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.store import database as store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


def csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found
    return found.group(1)


def contest(folder: Path, bases: tuple[str, ...] = ("heuristic", "greedy")) -> tuple[str, dict[str, bytes]]:
    """A contest with ann's and ben's bots (ben's v2 to be rejected) and the house bot random."""
    organiser = store.init_contest(folder, "Cup")
    db = store.open_db(folder)
    sources = {}
    try:
        for who, base in zip(("ann", "ben"), bases, strict=True):
            author = int(store.invite(db, who).split(".")[0][1:])
            text = (ROOT / "bots" / f"{base}.py").read_text().replace(f'"{base}"', f'"{who}bot"')
            sources[f"{who}bot"] = text.encode()
            store.finish_check(db, store.add_submission(db, author, f"{who}bot", text.encode()), {"clean": True}, None)
        rejected = store.add_submission(db, author, "benbot", sources["benbot"] + b"# v2\n")
        store.finish_check(db, rejected, {"clean": True}, None)
        house.add(db, ["random"])
    finally:
        db.close()
    return organiser, sources


def post_form(client: TestClient, path: str, pairs: list[tuple[str, str]]) -> Any:
    """A form with a field given more than once (the desk's entrant checkboxes)."""
    headers = {"content-type": "application/x-www-form-urlencoded"}
    return client.post(path, content=urlencode(pairs), headers=headers)


ENTRANTS = [("entrant", b) for b in ("annbot", "benbot", "random")]


def sign_in(client: TestClient, organiser: str) -> str:
    client.post("/login", data={"token": organiser, "csrf": csrf(client.get("/login").text)})
    token = csrf(client.get("/desk").text)
    for sid, verdict in ((1, "approved"), (2, "approved"), (3, "rejected")):
        answer = client.post(f"/desk/{sid}/review", data={"csrf": token, "verdict": verdict, "comment": "ok"})
        assert answer.status_code == 200
    return token


def wait_for_state(client: TestClient, want: str, seen: list[str] | None = None) -> str:
    deadline = time.monotonic() + BOUND
    while f'id="final-state">{want}<' not in (desk := client.get("/desk").text):
        assert want == "failed" or 'id="final-state">failed<' not in desk, desk
        assert time.monotonic() < deadline, desk
        if seen is not None:
            seen.append(desk)
        time.sleep(0.3)
    return desk


@pytest.mark.long
def test_the_final_is_refused_until_frozen_then_run_and_published(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    organiser, sources = contest(folder)
    form = {"round": "1", "mode": "fixed", "games": "1", "players": "2-3", "house": "1"}
    with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
        token = sign_in(client, organiser)
        for sid in (1, 3):  # a report with no smoke games (a check that could not run) is a page, not a 500
            assert client.get(f"/submissions/{sid}").status_code == 200
            assert client.get(f"/desk/{sid}").status_code == 200
        desk = client.get("/desk").text
        assert "freeze submissions first" in desk and "house bot" in desk
        # the desk puts registered bots in the house, never a file of the server named by a page
        for name in ("/etc/passwd", str(ROOT / "bots" / "greedy.py"), "../greedy.py", "greedy.py"):
            answer = client.post("/desk/house", data={"csrf": token, "action": "add", "name": name})
            assert answer.status_code == 400 and "choose a registered bot" in answer.json()["error"], name
        assert client.post("/desk/house", data={"csrf": token, "action": "remove", "name": "annbot"}).status_code == 409
        assert client.post("/desk/house", data={"csrf": token, "action": "add", "name": "greedy"}).status_code == 200
        assert client.post("/desk/house", data={"csrf": token, "action": "remove", "name": "greedy"}).status_code == 200
        db = store.open_db(folder)
        assert [(h.name, h.playing) for h in house.listing(db)] == [("greedy", False), ("random", True)]
        db.close()
        assert all(f'name="entrant" value="{b}"' in desk for b in ("annbot", "benbot", "random"))
        assert post_form(client, "/desk/final", [("csrf", token), *form.items(), *ENTRANTS]).status_code == 409
        assert client.post("/desk/final", data={"csrf": token, **form}).status_code == 409  # uploads are open
        client.post("/desk/freeze", data={"csrf": token, "frozen": "1"})
        for bad in ({"players": "2-9"}, {"games": "²"}, {"round": "3"}, {"games": "0"}):
            assert client.post("/desk/final", data={"csrf": token, **form, **bad}).status_code == 400, bad
        assert client.post("/desk/final", data={"csrf": token, **form}).status_code == 409  # no entrant chosen
        assert post_form(client, "/desk/final", [("csrf", token), *form.items(), *ENTRANTS]).status_code == 200
        again = post_form(client, "/desk/final", [("csrf", token), *form.items(), *ENTRANTS])
        assert again.status_code == 409  # one final at a time
        desk = wait_for_state(client, "published")
        assert "tables of 2, 3; 1 deal a table" in desk and re.search(r"\d+ games played", desk)
        site = client.get("/final/1/").text
        assert "Cup: final of round one" in site and "Yard bridge tournament" not in site
        assert all(f'data-bot="{b}"' in site for b in ("annbot", "benbot", "random"))
        assert ">ann<" in site and ">ben<" in site and "house bot" in site and "authors&#39; rank" in site
        index = client.get("/final/").text
        assert 'href="/final/1/"' in index and client.get("/final/2/").status_code == 404
        assert 'href="/final/"' in client.get("/").text  # every contest page links to the finals
        assert "kept as it was run" in client.get("/desk").text
    # the approved active versions' stored bytes (benbot went back to v1 when v2 was rejected), each
    # with a manifest naming its author; the registered house bot plays by its name
    bots = final.home(folder, 1) / "bots"
    assert {p.name: p.read_bytes() for p in bots.glob("*.py")} == {f"{b}.py": s for b, s in sources.items()}
    assert sorted(p.name for p in bots.iterdir()) == ["annbot.json", "annbot.py", "benbot.json", "benbot.py"]


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def kill_tree(pid: int) -> None:
    """kill -9 a process and everything under it, as a crash of the machine's final would."""
    for child in children(pid):
        kill_tree(child)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stored_games(folder: Path) -> int:
    return final.progress(folder, 1) or 0


def results(folder: Path) -> set[tuple[Any, ...]]:
    with sqlite3.connect(final.home(folder, 1) / "final.sqlite") as conn:
        return set(conn.execute("SELECT game_id, seat, bot, place, score FROM results"))


@pytest.mark.long
def test_a_final_killed_mid_run_is_resumed_from_the_desk(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    organiser, _ = contest(folder, ("greedy", "greedy"))
    form: dict[str, Any] = {"round": "1", "mode": "fixed", "games": "30", "players": "2", "house": "1"}
    with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
        token = sign_in(client, organiser)
        client.post("/desk/freeze", data={"csrf": token, "frozen": "1"})
        assert post_form(client, "/desk/final", [("csrf", token), *form.items(), *ENTRANTS]).status_code == 200
        deadline = time.monotonic() + BOUND
        while stored_games(folder) < 10:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        db = store.open_db(folder)
        pid = final.state(db, 1)["pid"]
        kill_tree(pid)
        db.close()
        desk = wait_for_state(client, "interrupted")  # its process is gone: the desk says so, and offers to resume
        kept = results(folder)
        assert 10 <= len(kept) // 2 < 180 and 'name="resume" value="1"' in desk and "Resume the final" in desk
        assert client.post("/desk/final", data={"csrf": token, "round": "1", "resume": "1"}).status_code == 200
        wait_for_state(client, "published")
    assert stored_games(folder) == 3 * 30 * 2  # every game once: the resumed run played only the rest
    assert kept <= results(folder)  # and the games stored before the crash are kept as they were


def test_a_damaged_database_cannot_name_a_file_outside_the_finals_folder(tmp_path: Path) -> None:
    from arena.server.contest.lineup import Entry
    from arena.server.contest.publish import write_entrant

    for label in ("../escape", "a/b", ".hidden", "x" * 41, "annbot.v1/../../x"):
        with pytest.raises(store.ContestError, match="is no bot name"):
            write_entrant(tmp_path, Entry(label, 1, "annbot", 1, "ann", None, 1), b"class Bot:\n    pass\n")
    assert list(tmp_path.iterdir()) == []


def test_a_finals_stored_settings_are_checked_when_read_back() -> None:
    settings = final.FinalSettings(players=(2, 4), games=3, budget=90, top=2, seed=7, entrants=("a", "b.v2"))
    assert final.FinalSettings.from_dict(settings.to_dict()) == settings
    assert final.FinalSettings.from_dict({}) == final.FinalSettings()
    for bad in (
        {"players": [9]},
        {"players": "2-6"},
        {"games": "5"},
        {"budget": True},
        {"budget": 0},
        {"confidence": 2},
        {"entrants": [1]},
        {"house": "yes"},
        {"until_separated": 1},
        {"move_seconds": float("nan")},
    ):
        with pytest.raises(ValueError):
            final.FinalSettings.from_dict(bad)
        assert final.settings_of({"settings": bad}) is None
    with pytest.raises(ValueError):
        final.FinalSettings.from_dict(["players"])
