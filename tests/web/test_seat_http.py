"""The browser seat speaks HTTP correctly (issue 17, item 5), tested with raw sockets: a refused
or failed request never leaves its body on a keep-alive connection to be read as a second
request (the smuggling attack past the DNS-rebinding check), bodies are bounded and framed
by one Content-Length, a stalled client is cut off, and a page that goes away is no error."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

import arena.web.serve as serve
from arena.web.seat import SeatState
from arena.web.serve import MAX_BODY, SeatServer

DRAW = b'{"action": "draw"}'


@pytest.fixture(scope="module")
def one_server() -> Iterator[SeatServer]:
    srv = SeatServer(SeatState())
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def server(one_server: SeatServer) -> Iterator[SeatServer]:
    """The module's server, its action queue empty; no handler failed during the test."""
    while not one_server.shared.actions.empty():
        one_server.shared.actions.get_nowait()
    yield one_server
    assert one_server.errors == []


def request(method: str, path: str, headers: dict[str, str] | list[tuple[str, str]], body: bytes = b"") -> bytes:
    items = headers.items() if isinstance(headers, dict) else headers
    head = "".join(f"{k}: {v}\r\n" for k, v in items)
    return f"{method} {path} HTTP/1.1\r\n{head}\r\n".encode() + body


def act(token: str, body: bytes = DRAW, host: str = "127.0.0.1") -> bytes:
    """A full request that acts (a draw), as an attacker would hide it in a body."""
    return request(
        "POST",
        f"/{token}/act",
        {"Host": host, "Content-Type": "application/json", "Content-Length": str(len(body))},
        body,
    )


def exchange(srv: SeatServer, data: bytes, *, seconds: float = 30.0) -> tuple[list[int], bool]:
    """Send ``data`` on one connection; the statuses of every response read until the server
    closes it (or ``seconds`` pass with nothing more), and whether it closed."""
    host, port = srv.server_address[:2]
    statuses: list[int] = []
    with socket.create_connection((str(host), int(port)), timeout=seconds) as s:
        s.sendall(data)
        buf = b""
        closed = False
        while True:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            buf += chunk
            while b"\r\n\r\n" in buf:  # parse every complete response in the buffer
                head, rest = buf.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                fields = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
                length = int(fields.get("content-length", "0"))
                if len(rest) < length:
                    break
                statuses.append(int(lines[0].split()[1]))
                if fields.get("connection", "").lower() == "close":
                    assert rest[length:] == b""
                buf = rest[length:]
            if statuses and statuses[-1] < 300:  # a keep-alive success: nothing more will come
                s.settimeout(0.5)
    return statuses, closed


def smuggle_cases(token: str) -> dict[str, bytes]:
    """Refused or failed requests whose body is a full second request that would act."""
    hidden = act(token)
    n = str(len(hidden))
    json_kind = {"Content-Type": "application/json"}
    return {
        "foreign Host (DNS rebinding)": request(
            "POST", f"/{token}/act", {"Host": "evil.example", **json_kind, "Content-Length": n}, hidden
        ),
        "bad token": request("POST", "/nope/act", {"Host": "127.0.0.1", **json_kind, "Content-Length": n}, hidden),
        "bad path": request("POST", f"/{token}/other", {"Host": "127.0.0.1", **json_kind, "Content-Length": n}, hidden),
        "bad content type": request(
            "POST", f"/{token}/act", {"Host": "127.0.0.1", "Content-Type": "text/plain", "Content-Length": n}, hidden
        ),
        "bad JSON": request("POST", f"/{token}/act", {"Host": "127.0.0.1", **json_kind, "Content-Length": n}, hidden),
        "GET with a body": request("GET", f"/{token}/state", {"Host": "127.0.0.1", "Content-Length": n}, hidden),
        "bad method": request("PUT", f"/{token}/act", {"Host": "127.0.0.1", "Content-Length": n}, hidden),
        "two Content-Length": request(
            "POST",
            f"/{token}/act",
            [
                ("Host", "127.0.0.1"),
                ("Content-Type", "application/json"),
                ("Content-Length", "0"),
                ("Content-Length", n),
            ],
            hidden,
        ),
        "chunked": request(
            "POST",
            f"/{token}/act",
            {"Host": "127.0.0.1", **json_kind, "Transfer-Encoding": "chunked"},
            b"0\r\n\r\n" + hidden,
        ),
        "chunked and a length": request(
            "POST",
            f"/{token}/act",
            {"Host": "127.0.0.1", **json_kind, "Content-Length": "5", "Transfer-Encoding": "chunked"},
            b"0\r\n\r\n" + hidden,
        ),
        "length not a number": request(
            "POST", f"/{token}/act", {"Host": "127.0.0.1", **json_kind, "Content-Length": "+5"}, hidden
        ),
        "two Hosts": request(
            "POST",
            f"/{token}/act",
            [("Host", "127.0.0.1"), ("Host", "evil.example"), ("Content-Type", "application/json")],
            hidden,
        ),
    }


CASES = list(smuggle_cases("T"))


@pytest.mark.parametrize("case", CASES)
def test_a_refused_request_whose_body_is_a_request_never_acts(case: str, server: SeatServer) -> None:
    data = smuggle_cases(server.token)[case]
    statuses, closed = exchange(server, data)
    assert len(statuses) == 1 and statuses[0] >= 400, statuses  # one answer: the refusal
    assert closed  # and the connection ends with it
    assert server.shared.actions.empty()  # the hidden request never acted


def test_a_good_request_keeps_its_connection_and_acts_once(server: SeatServer) -> None:
    statuses, closed = exchange(server, act(server.token) + act(server.token), seconds=5)
    assert statuses == [202, 202] and not closed  # keep-alive works for requests that are fine
    assert server.shared.actions.qsize() == 2


def test_an_oversized_body_is_refused_unread_and_the_connection_closed(server: SeatServer) -> None:
    head = request(
        "POST",
        f"/{server.token}/act",
        {"Host": "127.0.0.1", "Content-Type": "application/json", "Content-Length": str(100 * MAX_BODY)},
    )
    statuses, closed = exchange(server, head)  # no body sent: the server must not wait for it
    assert statuses == [413] and closed
    statuses, closed = exchange(server, act(server.token, b" " * (MAX_BODY - len(DRAW)) + DRAW))
    assert statuses == [202]  # the largest body allowed


def test_a_deeply_nested_body_is_a_400_not_a_traceback(server: SeatServer) -> None:
    statuses, closed = exchange(server, act(server.token, b"[" * MAX_BODY))
    assert statuses == [400] and closed


def test_a_stalled_body_is_cut_off_and_blocks_no_other_request(
    server: SeatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serve.Handler, "timeout", 0.5)
    host, port = server.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=30) as slow:
        slow.sendall(act(server.token)[:-5])  # five bytes of the body never come
        statuses, _ = exchange(server, act(server.token), seconds=5)
        assert statuses == [202]  # another client is served meanwhile
        assert slow.recv(100) == b""  # and the stalled connection is closed by the server
    assert server.shared.actions.qsize() == 1


def test_a_tab_closed_during_a_long_poll_is_no_error(
    server: SeatServer, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Reproduced: the page's long poll waits POLL_SECONDS (20 s); a tab closed meanwhile made the
    # answer hit a reset or broken pipe, and socketserver printed a raw traceback.
    monkeypatch.setattr(serve, "POLL_SECONDS", 0.3)
    host, port = server.server_address[:2]
    for linger in (False, True):  # closed plainly (broken pipe) or with a reset
        s = socket.create_connection((str(host), int(port)), timeout=5)
        s.sendall(request("GET", f"/{server.token}/state?after=99", {"Host": "127.0.0.1"}))
        if linger:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
    for _ in range(2):  # each waits its poll time, by which both closed polls were answered
        statuses, _ = exchange(
            server, request("GET", f"/{server.token}/state?after=99", {"Host": "127.0.0.1"}), seconds=5
        )
        assert statuses == [200]
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err, err


def test_the_state_still_answers_as_json(server: SeatServer) -> None:
    host, port = server.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=30) as s:
        s.sendall(request("GET", f"/{server.token}/state", {"Host": "127.0.0.1", "Connection": "close"}))
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert json.loads(data.split(b"\r\n\r\n", 1)[1])["phase"] == "waiting"
