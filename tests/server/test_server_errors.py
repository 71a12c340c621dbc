"""Every refusal and error as its reader needs it (issue 30, item 4): a person's browser (a request
that accepts HTML) gets a page in the site's layout saying what went wrong and what to do next,
with the refusal's status; ``/api/`` routes and scripts keep JSON. Tested over all the app's
routes (``app.routes``: a route added later is covered without a change here), in every state
that refuses them, and over the cases people met."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Mount, Route, WebSocketRoute

from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.routes.tables import guest_link
from arena.server.store import database as store

with warnings.catch_warnings():  # it warns that it will move to another HTTP client; the one installed works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

#: What Chromium sends when it opens a page.
BROWSER = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
}
BOT = (Path(__file__).resolve().parents[2] / "bots" / "greedy.py").read_text()
#: Values put in each path parameter: absent, a number no row has, not a number, odd digits, past 64 bits.
BAD_IDS = ("nosuch", "999999", "0", "%C2%B2", "99999999999999999999999", "a%20b")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("errors") / "cup"
    organiser = store.init_contest(folder, "Error Cup")
    db = store.open_db(folder)
    tokens = {"ann": store.invite(db, "ann"), "ben": store.invite(db, "ben"), "organiser": organiser}
    for who, name in (("ann", "annbot"), ("ben", "benbot")):
        author = int(tokens[who].split(".")[0][1:])
        sid = store.add_submission(db, author, name, BOT.replace('"greedy"', f'"{name}"').encode())
        store.finish_check(db, sid, {"clean": True}, None)
    db.close()
    yield {"folder": folder, "tokens": tokens}


def client_of(site: dict[str, Any], **settings: Any) -> TestClient:
    app = create_app(ServerSettings(site["folder"], workers=False, **settings))
    return TestClient(app, raise_server_exceptions=False)


def csrf_of(client: TestClient) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/login", headers=BROWSER).text)
    assert found
    return found.group(1)


def sign_in(client: TestClient, token: str) -> None:
    answer = client.post("/login", data={"token": token, "csrf": csrf_of(client)}, follow_redirects=False)
    assert answer.status_code == 303, answer.text


def is_page(answer: Any) -> bool:
    """An HTML page in the site's layout, saying what happened, with no trace of a script's answer."""
    text = answer.text
    return (
        answer.headers.get("content-type", "").startswith("text/html")
        and '<header class="bar">' in text
        and "Error Cup" in text  # the layout the pages share, not the bare page made when it fails
        and "<main>" in text
        and ('id="refusal"' in text or 'id="refused"' in text)
        and "Traceback" not in text
        and '{"error"' not in text
        and "(/login)" not in text  # a path is a link, never text to copy
    )


def is_json_error(answer: Any) -> bool:
    return answer.headers.get("content-type", "").startswith("application/json") and set(answer.json()) == {"error"}


def paths_of(template: str) -> list[str]:
    """``template`` with each ``{param}`` filled by every bad id (one parameter at a time is enough:
    the routes have one)."""
    if "{" not in template:
        return [template]
    return [re.sub(r"\{[^}]+\}", value, template) for value in BAD_IDS]


def http_routes(app: Any) -> list[tuple[str, set[str]]]:
    """Every address of the app an HTTP request can name, and the methods it takes."""
    found = []
    for route in app.routes:
        if isinstance(route, Route):
            found.append((route.path, set(route.methods or ())))
        elif isinstance(route, Mount):
            found.append((route.path + "/{path}", {"GET", "HEAD"}))
        elif isinstance(route, WebSocketRoute):  # a browser opening a socket's address as a page
            found.append((route.path, {"GET"}))
        else:
            raise AssertionError(f"a route of a kind this test does not know: {route!r}")
    return found


def test_every_route_refuses_a_browser_with_a_page_and_a_script_with_json(site: dict[str, Any]) -> None:
    refused: dict[str, list[tuple[str, str, int]]] = {}
    wrong: list[tuple[str, str, str, int, str]] = []
    states = ("signed out", "ann", "organiser", "guest")
    for state in states:
        with client_of(site) as client:
            if state == "guest":
                client.get(guest_link(client.app.state.secret, "gus"), headers=BROWSER, follow_redirects=False)
            elif state != "signed out":
                sign_in(client, site["tokens"][state])
            csrf = csrf_of(client)
            # signing out (with the form's token) ends the state: last
            for template, methods in sorted(http_routes(client.app), key=lambda r: r[0] == "/logout"):
                for path in paths_of(template):
                    asks: list[tuple[str, dict[str, Any]]] = [("DELETE", {})]  # taken by no route: a 405 or a 404
                    if "GET" in methods:
                        asks += [("GET", {}), ("GET", {"params": {"round": "99"}})]
                    if "POST" in methods:
                        asks += [
                            ("POST", {"data": {}}),  # no CSRF token
                            ("POST", {"data": {"csrf": csrf}}),  # nothing else
                            ("POST", {"data": {"csrf": csrf, "submission": "1", "verdict": "x", "token": "bad"}}),
                            ("POST", {"content": b"x" * (300 * 1024)}),  # past every body limit
                        ]
                    for method, extra in asks:
                        for accept, html in ((BROWSER, True), ({"Accept": "*/*"}, False)):
                            client.app.state.failures.seen.clear()  # the 429 of many tries: tested below
                            answer = client.request(method, path, headers=accept, follow_redirects=False, **extra)
                            if answer.status_code < 400:
                                continue
                            refused.setdefault(template, []).append((method, path, answer.status_code))
                            expect_page = html and not path.startswith("/api/")
                            ok = is_page(answer) if expect_page else is_json_error(answer)
                            if not ok:
                                wrong.append((state, method, path, answer.status_code, answer.text[:200]))
    assert wrong == [], wrong[:10]
    # every route was refused somewhere, and the refusals span the statuses people meet
    assert {t for t, _ in http_routes(client.app)} <= set(refused), set(t for t, _ in http_routes(client.app)) - set(
        refused
    )
    statuses = {status for answers in refused.values() for _, _, status in answers}
    assert {401, 403, 404, 405, 413} <= statuses, statuses


def test_the_cases_people_met_say_what_to_do_next(site: dict[str, Any]) -> None:
    tokens = site["tokens"]
    with client_of(site) as client:
        # a wrong token at /login: the form again, saying so, 401
        wrong = client.post("/login", data={"token": "a1.nope", "csrf": csrf_of(client)}, headers=BROWSER)
        assert wrong.status_code == 401 and is_page(wrong) and 'id="token"' in wrong.text
        assert "That token is not valid here" in wrong.text
        # /upload signed out: sign in, as a link
        upload = client.get("/upload", headers=BROWSER)
        assert upload.status_code == 401 and is_page(upload)
        assert re.search(r'<a class="action first" href="/login">Sign in</a>', upload.text)
        for path in ("/bots/nosuch", "/games/nosuch", "/nowhere/at/all", "/final/1/"):
            missing = client.get(path, headers=BROWSER)
            assert missing.status_code == 404 and is_page(missing) and 'href="/">The leaderboard</a>' in missing.text
        # a form's address opened as a page: 405, and the page that exists
        assert client.get("/logout", headers=BROWSER).status_code == 405
        other = client.request("PUT", "/upload", headers=BROWSER)
        assert other.status_code == 405 and is_page(other) and 'href="/upload">Open the page</a>' in other.text
        sign_in(client, tokens["ann"])
        # another author's submission is as absent as a missing one
        theirs = client.get("/submissions/2", headers=BROWSER)
        assert theirs.status_code == 404 and is_page(theirs) and "benbot" not in theirs.text
        # a form sent without its token: reload and try again, with the way back to the form
        back = {**BROWSER, "Referer": "http://testserver/upload"}
        forged = client.post("/upload", files={"bot": ("x.py", b"x = 1\n")}, headers=back)
        assert forged.status_code == 403 and is_page(forged) and "reload the page" in forged.text
        assert 'href="/upload">Back to the page you came from</a>' in forged.text
        # an oversized upload: 413, and back to the form
        big = client.post("/upload", files={"bot": ("big.py", b"#" * (400 * 1024))}, headers=back)
        assert big.status_code == 413 and is_page(big) and 'href="/upload">Back' in big.text
        # another site's address is never offered as the way back, nor a path browsers read as one
        for referer in ("http://evil.test/x", "http://testserver//evil.test/x", "http://testserver/\\evil.test/x"):
            away = client.get("/bots/nosuch", headers={**BROWSER, "Referer": referer})
            assert away.status_code == 404 and "evil.test" not in away.text and "Back to" not in away.text
        # the organiser's page for an author: 403, sign in as someone else
        desk = client.get("/desk", headers=BROWSER)
        assert desk.status_code == 403 and is_page(desk) and "Sign in as someone else" in desk.text
        # scripts keep JSON, and /api/ whatever the Accept header says
        assert is_json_error(client.get("/bots/nosuch"))
        assert is_json_error(client.get("/api/nosuch", headers=BROWSER))
        assert is_json_error(client.get("/api/submissions/2", headers=BROWSER))


def test_frozen_submissions_are_said_on_the_upload_page_and_refused_with_a_page(site: dict[str, Any]) -> None:
    db = store.open_db(site["folder"])
    store.set_setting(db, "frozen", "1")
    try:
        with client_of(site) as client:
            sign_in(client, site["tokens"]["ann"])
            form = client.get("/upload", headers=BROWSER)
            assert form.status_code == 200 and "Submissions are frozen" in form.text
            assert re.search(r"<fieldset disabled>", form.text)  # the form cannot be sent
            csrf = csrf_of(client)
            sent = client.post(
                "/upload", data={"csrf": csrf}, files={"bot": ("annbot.py", BOT.encode())}, headers=BROWSER
            )
            assert sent.status_code == 409 and is_page(sent) and "lifts the freeze" in sent.text
    finally:
        store.set_setting(db, "frozen", "0")
        db.close()
    with client_of(site) as client:
        sign_in(client, site["tokens"]["ann"])
        form = client.get("/upload", headers=BROWSER)
        assert "Submissions are frozen" not in form.text and "<fieldset>" in form.text


def test_too_many_tries_are_a_page_that_says_how_long_to_wait(site: dict[str, Any]) -> None:
    from arena.server.http.auth import FAILURES_PER_MINUTE

    with client_of(site) as client:
        csrf = csrf_of(client)
        for i in range(FAILURES_PER_MINUTE):
            assert client.post("/login", data={"token": f"a1.guess{i}", "csrf": csrf}).status_code == 401
        slowed = client.post("/login", data={"token": "a1.again", "csrf": csrf}, headers=BROWSER)
        assert slowed.status_code == 429 and is_page(slowed) and "wait a minute" in slowed.text
        assert slowed.headers["retry-after"] == "60"
        assert is_json_error(client.post("/login", data={"token": "a1.again", "csrf": csrf}))


class Broken:
    """A leaderboard that fails as a bug would."""

    def get(self) -> None:
        raise RuntimeError("secret-internal-detail at /srv/contest.db")

    def close(self) -> None:
        pass


def test_an_internal_error_is_a_500_page_that_leaks_nothing(site: dict[str, Any]) -> None:
    with client_of(site) as client:
        sign_in(client, site["tokens"]["ann"])
        client.app.state.board = Broken()
        page = client.get("/", headers=BROWSER)
        assert page.status_code == 500 and is_page(page)
        assert "secret-internal-detail" not in page.text and "RuntimeError" not in page.text
        assert "Something went wrong" in page.text and "Sign out" in page.text  # still the signed-in layout
        assert page.headers["x-frame-options"] == "DENY" and page.headers["x-content-type-options"] == "nosniff"
        api = client.get("/api/leaderboard", headers=BROWSER)
        assert api.status_code == 500 and is_json_error(api) and "secret-internal-detail" not in api.text
