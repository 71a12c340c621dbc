"""The round-one final from the desk (issue 21, item 4), through the app's routes and without a
browser (tests/server/test_server_browser.py keeps what only a browser proves): refused until frozen,
then run by the tournament engine over the approved versions' stored bytes, and published."""

from __future__ import annotations

import re
import time
import warnings
from pathlib import Path

import pytest
from support.server import BOUND, ROOT

from arena.server.http.app import create_app
from arena.server.http.common import ServerSettings
from arena.server.store import database as store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


def csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found
    return found.group(1)


@pytest.mark.long
def test_the_final_is_refused_until_frozen_then_run_and_published(tmp_path: Path) -> None:
    folder = tmp_path / "cup"
    organiser = store.init_contest(folder, "Cup")
    db = store.open_db(folder)
    sources = {}
    try:
        for who, base in (("ann", "heuristic"), ("ben", "greedy")):
            author = int(store.invite(db, who).split(".")[0][1:])
            text = (ROOT / "bots" / f"{base}.py").read_text().replace(f'"{base}"', f'"{who}bot"')
            sources[f"{who}bot"] = text.encode()
            store.finish_check(db, store.add_submission(db, author, f"{who}bot", text.encode()), {"clean": True}, None)
        rejected = store.add_submission(db, author, "benbot", sources["benbot"] + b"# v2\n")
        store.finish_check(db, rejected, {"clean": True}, None)
    finally:
        db.close()
    with TestClient(create_app(ServerSettings(folder, workers=False))) as client:
        client.post("/login", data={"token": organiser, "csrf": csrf(client.get("/login").text)})
        token = csrf(client.get("/desk").text)
        for sid, verdict in ((1, "approved"), (2, "approved"), (3, "rejected")):
            answer = client.post(f"/desk/{sid}/review", data={"csrf": token, "verdict": verdict, "comment": "ok"})
            assert answer.status_code == 200
        for sid in (1, 3):  # a report with no smoke games (a check that could not run) is a page, not a 500
            assert client.get(f"/submissions/{sid}").status_code == 200
            assert client.get(f"/desk/{sid}").status_code == 200
        assert "freeze submissions first" in client.get("/desk").text
        assert client.post("/desk/final", data={"csrf": token}).status_code == 409  # not while uploads are open
        client.post("/desk/freeze", data={"csrf": token, "frozen": "1"})
        assert client.post("/desk/final", data={"csrf": token}).status_code == 200
        assert client.post("/desk/final", data={"csrf": token}).status_code == 409  # one final at a time
        deadline = time.monotonic() + BOUND
        while 'id="final-state">published<' not in (desk := client.get("/desk").text):
            assert "failed" not in desk and time.monotonic() < deadline, desk
            time.sleep(0.3)
        site = client.get("/final/")
        assert site.status_code == 200 and "annbot" in site.text and "benbot" in site.text
    # the approved active versions' stored bytes (benbot went back to v1 when v2 was rejected)
    assert {p.name: p.read_bytes() for p in (folder / "final" / "bots").iterdir()} == {
        f"{b}.py": s for b, s in sources.items()
    }
