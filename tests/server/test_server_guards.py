"""The newer routes get the old routes' guards (issue 27, item 5): per-address caps on tables and
registrations, the failed sign-in counter on every secret a client presents, one parser for every
integer of a request, and sign-out and disable ending that person's open sockets. Each test is an
attack that escaped an outside red team; docs/security/server.md "The newer routes get the old routes'
guards" lists them."""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.server import ROOT, Server, arena, token_of, wait_for
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from arena.server.http.app import create_app
from arena.server.http.settings import ServerSettings
from arena.server.store import database as store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ARENA = ROOT / "arena"
pytestmark = pytest.mark.filterwarnings("ignore:connect.. must be used:DeprecationWarning")


def contest(folder: Path, authors: int = 0) -> tuple[str, list[str]]:
    """A contest (as `arena contest init` and `invite` make it): the organiser's token and ``authors`` authors'."""
    organiser = store.init_contest(folder, "Guards")
    db = store.open_db(folder)
    try:
        return organiser, [store.invite(db, f"eve{i}") for i in range(authors)]
    finally:
        db.close()


def app(folder: Path, **settings: Any) -> Any:
    return create_app(ServerSettings(folder, workers=False, **settings))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def csrf_of(client: Any, path: str = "/login") -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get(path).text)
    assert found
    return found.group(1)


def sign_in(client: Any, token: str) -> str:
    """Sign ``client`` in with ``token`` by the form; the session's CSRF token."""
    answer = client.post("/login", data={"token": token, "csrf": csrf_of(client)}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    return csrf_of(client, "/tables")


# -- caps per address ------------------------------------------------------------------------------


def test_one_address_cannot_hold_every_table_whoever_signs_in_from_it(tmp_path: Path) -> None:
    # ten authors' tokens from one address held all 20 tables (2 a person, 20 on the server, none
    # per address); now an address sits at --tables-per-address open tables (4 by default)
    _, tokens = contest(tmp_path / "c", 10)
    seen = []
    server = app(tmp_path / "c")
    with TestClient(server) as one, TestClient(server, client=("10.0.0.2", 1)) as other:
        for token in tokens:
            for _ in range(2):
                seen.append(one.post("/api/tables", json={"people": 2}, headers=bearer(token)).status_code)
        assert seen == [201] * 4 + [429] * 16, seen
        key = other.post("/api/tables", json={"people": 3}, headers=bearer(tokens[9])).json()["id"]
        refused = one.post(f"/api/tables/{key}/join", json={}, headers=bearer(tokens[5]))
        assert refused.status_code == 429 and "this address" in refused.json()["error"]  # joining takes a place too
        assert other.post(f"/api/tables/{key}/join", json={}, headers=bearer(tokens[8])).status_code == 200
        # a table the address sits at already takes no second place of it
        assert other.post("/api/tables", json={"people": 2}, headers=bearer(tokens[7])).status_code == 201
    with TestClient(app(tmp_path / "c", tables_per_address=6)) as wider:  # `arena serve --tables-per-address 6`
        # the 4 tables the address opened are still open after the restart (ruling 130): 2 more
        made = [wider.post("/api/tables", json={"people": 2}, headers=bearer(t)).status_code for t in tokens[2:6]]
    assert made == [201] * 2 + [429] * 2


def test_one_address_registers_a_few_authors_a_day(tmp_path: Path) -> None:
    # with open registration one address registered 10 authors (then held every table, and
    # multiplied every limit kept per author); now --registrations-per-address a day (5 by default)
    contest(tmp_path / "c")
    with TestClient(app(tmp_path / "c", open_registration=True)) as client:
        assert client.post("/api/register", json={"name": "eve0"}).status_code == 201
        taken = client.post("/api/register", json={"name": "EVE0"})  # refused: no place used
        assert taken.status_code == 409
        seen = [client.post("/api/register", json={"name": f"eve{i}"}).status_code for i in range(1, 10)]
        assert seen == [201] * 4 + [429] * 5, seen
        form = client.post("/register", data={"name": "formeve", "csrf": csrf_of(client)})
        assert form.status_code == 429  # the page's form and the API share the cap
    db = store.open_db(tmp_path / "c")
    assert db.execute("SELECT COUNT(*) FROM authors").fetchone()[0] == 5
    db.close()


# -- every sign-in is counted ----------------------------------------------------------------------


def test_every_bearer_token_and_guest_link_counts_as_a_sign_in(tmp_path: Path) -> None:
    # the tables API read bearer tokens without the failed sign-in counter (guessing at full speed
    # while /api and /login answered 429 after 30 a minute), and so did guest links
    _, tokens = contest(tmp_path / "c", 1)
    with TestClient(app(tmp_path / "c")) as client:
        for n in range(30):
            wrong = client.post("/api/tables", json={"people": 2}, headers=bearer(f"a1.guess{n}"))
            assert wrong.status_code == 401
        locked = client.post("/api/tables", json={"people": 2}, headers=bearer(tokens[0]))
        assert locked.status_code == 429  # the right token too, from an address that guesses
        assert client.get("/api/submissions/1", headers=bearer(tokens[0])).status_code == 429
    with TestClient(app(tmp_path / "c")) as client:
        forged = [client.get(f"/guest/forged{n}", follow_redirects=False).status_code for n in range(31)]
        assert forged == [403] * 30 + [429]
        assert client.post("/api/tables", json={"people": 2}, headers=bearer(tokens[0])).status_code == 429


def calls_of(tree: ast.AST, name: str) -> list[ast.Call]:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and (getattr(n.func, "attr", None) == name or getattr(n.func, "id", None) == name)
    ]


def test_one_function_checks_every_secret_a_client_presents() -> None:
    # the class: a route that checks a token by itself skips the counter; every token lookup
    # (store.who) and every guest link (read_guest) goes through auth.signed
    for path in sorted((ARENA / "server").rglob("*.py")):
        tree = ast.parse(path.read_text())
        rel = path.relative_to(ARENA).as_posix()
        if rel in ("server/store/database.py", "server/http/auth.py"):
            continue  # who is defined in the one, called (through signed) in the other
        uses = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "who"]
        assert uses == [], f"{rel}:{uses} checks a token outside auth.token_owner"
        for call in calls_of(tree, "read_guest"):
            assert rel == "server/routes/tables.py"
            parents = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and call in ast.walk(n) and n is not call]
            assert any(getattr(p.func, "id", None) == "signed" for p in parents), f"{rel}:{call.lineno}"


# -- one parser for the numbers of a request ------------------------------------------------------


def test_numbers_in_a_table_form_or_json_are_ascii_digits_in_range(tmp_path: Path) -> None:
    # the tables form read people and limit with int() after str.isdigit(): "²" was a 500 and
    # "٥٠" (Arabic-Indic digits) a point limit of 50
    _, tokens = contest(tmp_path / "c", 1)
    with TestClient(app(tmp_path / "c"), raise_server_exceptions=False) as client:
        csrf = sign_in(client, tokens[0])
        for people, limit in (("²", "30"), ("2", "٥٠"), ("2", "3²"), ("+2", "30"), (" 2", "30"), ("2", "3_0")):
            answer = client.post(
                "/tables", data={"people": people, "limit": limit, "csrf": csrf}, follow_redirects=False
            )
            assert answer.status_code == 400 and set(answer.json()) == {"error"}, (people, limit, answer.text)
        for people in ("2", True, 2.0, -2, 10**30, None):
            answer = client.post("/api/tables", json={"people": people, "limit": 30})
            assert answer.status_code == 400, (people, answer.text)
        assert client.get("/api/tables").json()["tables"] == []
        assert client.post("/tables", data={"people": "2", "limit": "30", "csrf": csrf}).status_code == 200


#: Modules that read requests (the server's routes and plumbing, the browser seat's server).
REQUEST_MODULES = [*(ARENA / "server" / "routes").glob("*.py"), *(ARENA / "server" / "http").glob("*.py")]
REQUEST_MODULES.append(ARENA / "web" / "serve.py")
#: Names of database rows in those modules: int() of their columns reads a stored value, not a request.
ROWS = {"row", "owner", "o"}


def test_every_integer_of_a_request_goes_through_one_parser() -> None:
    # the class of the bugs above: int() of request text (with or without isdigit) in a route;
    # now the only digit test is arena/trust/numbers.py, and a route's int() reads a database row
    digit_tests = {"isdigit", "isdecimal", "isnumeric"}
    found = []
    for path in sorted(ARENA.rglob("*.py")):
        rel = path.relative_to(ARENA).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in digit_tests and rel != "trust/numbers.py":
                found.append(f"{rel}:{node.lineno} .{node.attr}")
    # playing/match.py tells a name's "#2" suffix (any digit, so "#٢" is reserved too): no number is read
    assert [f.split(":")[0] for f in found] == ["playing/match.py"], found
    for path in REQUEST_MODULES:
        for call in calls_of(ast.parse(path.read_text()), "int"):
            arg = call.args[0] if call.args else None
            row = isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) and arg.value.id in ROWS
            assert row or isinstance(arg, ast.BinOp), f"{path.relative_to(ARENA)}:{call.lineno}: int() of a request?"


# -- sign-out and disable end that person's sockets -----------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("sockets") / "cup"
    organiser = token_of(arena("contest", "init", str(folder)).stdout.splitlines()[-1])
    ann = token_of(arena("contest", "invite", str(folder), "ann").stdout)
    ben = token_of(arena("contest", "invite", str(folder), "ben").stdout)
    server = Server(folder, "--ladder-workers", "0", "--check-workers", "0")
    server.start()
    try:
        yield {"server": server, "folder": folder, "organiser": organiser, "ann": ann, "ben": ben}
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-3000:]


def seated(server: Server, token: str) -> tuple[httpx.Client, str, Any]:
    """A browser signed in with ``token``, at a table of its own (waiting for a second person), its socket open."""
    client = httpx.Client(base_url=server.url, timeout=30)
    csrf = sign_in(client, token)
    answer = client.post("/tables", data={"people": "2", "limit": "30", "csrf": csrf}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    key = answer.headers["location"].rsplit("/", 1)[1]
    cookie = f"arena_session={client.cookies['arena_session']}"
    ws = connect(
        f"ws://127.0.0.1:{server.port}/ws/tables/{key}",
        additional_headers={"Cookie": cookie},
        origin=server.url,  # type: ignore[arg-type]  # websockets takes a str
        open_timeout=30,
    )
    assert json.loads(ws.recv(timeout=30))["phase"] == "waiting"
    return client, csrf, ws


def closed_with(ws: Any, bound: float = 30.0) -> int | None:
    """The close code the server ends ``ws`` with (within ``bound`` seconds; a timeout fails the test)."""
    try:
        while True:
            ws.recv(timeout=bound)
    except ConnectionClosed:
        return ws.close_code  # type: ignore[no-any-return]
    except TimeoutError:
        raise AssertionError(f"the socket was still open {bound:g} s later") from None


@pytest.mark.long
def test_signing_out_ends_that_persons_open_sockets(served: dict[str, Any]) -> None:
    # a table's socket opened before sign-out kept acting for the person after it (sockets were
    # checked once, when they opened); now signing out closes every socket of that person
    server = served["server"]
    phone, csrf, ws = seated(server, served["ann"])
    laptop, _, other = seated(server, served["ann"])  # the same person in another browser
    assert phone.post("/logout", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    assert closed_with(ws) == 4003 and closed_with(other) == 4003
    assert laptop.get("/upload").status_code == 401  # and no session of theirs opens another
    phone.close()
    laptop.close()


@pytest.mark.long
def test_disabling_an_author_ends_their_token_sessions_and_sockets(served: dict[str, Any]) -> None:
    # there was no way to stop an author but editing the database; `arena contest disable` now
    # refuses their token, voids their sessions and closes their sockets (from another process)
    server, folder, ben = served["server"], str(served["folder"]), served["ben"]
    browser, _, ws = seated(server, ben)
    done = arena("contest", "disable", folder, "ben")
    assert done.returncode == 0 and "disabled" in done.stdout, done.stderr
    assert closed_with(ws) == 4003
    assert browser.get("/upload").status_code == 401
    assert server.get("/api/submissions/1", ben)[0] == 401
    again = arena("contest", "disable", folder, "nobody")
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "no author named" in again.stderr
    held = arena("contest", "enable", folder, "(house)")  # the house bots' row: no author to enable
    assert held.returncode == 2 and held.stderr.count("\n") == 1 and "holds the house bots" in held.stderr
    assert arena("contest", "enable", folder, "BEN").returncode == 0  # names compare ignoring case
    wait_for(lambda: server.get("/api/submissions/1", ben)[0] == 404, "ben's token to work again")
    assert browser.get("/upload").status_code == 401  # the session voided stays void
    browser.close()
