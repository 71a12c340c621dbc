"""The local web server behind ``arena play human BOT... --web``.

A :class:`ThreadingHTTPServer` (standard library) bound to 127.0.0.1 by
default. Every path starts with a random token, printed with the address, so
another user of the machine cannot play the seat; while bound to loopback,
requests whose ``Host`` is not the loopback address are refused (DNS
rebinding). Routes, under ``/TOKEN/``:

* ``GET /TOKEN/`` the table page (CSS and script inlined);
* ``GET /TOKEN/state?after=V`` the seat's state as JSON, once its version is
  past ``V`` (long poll, at most 20 s);
* ``POST /TOKEN/act`` one action, JSON ``{"action": "put", "card": "9h",
  "suit": null}`` (or ``draw``, ``finish``, ``leave``); the referee's answer
  comes with the next state.

Every request is framed before it is routed: a body is read only up to its one
``Content-Length`` (at most :data:`MAX_BODY` bytes); ``Transfer-Encoding``, two
``Content-Length`` or ``Host`` headers, a length that is not a number and a ``GET``
with a body are refused. Every refused or failed request is answered with
``Connection: close`` and its connection closed (its declared body, when small, is read
and dropped first), so no body is ever read as a second request (request smuggling past
the loopback check). Reads time out after :data:`READ_SECONDS`, so a stalled client holds
no thread for ever; a page that goes away mid-answer (a closed tab) is no error.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..trust.numbers import whole_number
from .render import render
from .seat import BadAction, SeatState

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_BODY = 4096
POLL_SECONDS = 20.0
#: A read from a client (request line, headers, body) that stalls this long closes its connection.
READ_SECONDS = 10.0
#: The largest Content-Length read (nine digits, as before; a body past MAX_BODY is refused anyway).
MAX_LENGTH = 999_999_999


def play_page(token: str) -> str:
    """The browser seat's page, everything inlined."""
    return render("play.html.j2", token=token, socket=None, heading=None, back=None)


class SeatServer(ThreadingHTTPServer):
    """Serves one :class:`SeatState` on ``host:port`` (port 0: any free port)."""

    daemon_threads = True

    def __init__(self, shared: SeatState, host: str = "127.0.0.1", port: int = 0) -> None:
        self.shared = shared
        self.token = secrets.token_urlsafe(18)
        self.page = play_page(self.token).encode()
        super().__init__((host, port), Handler)
        self.thread: threading.Thread | None = None
        self.errors: list[str] = []  # unexpected failures of request handlers

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        text = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{text}]" if ":" in text else text
        return f"http://{shown}:{port}/{self.token}/"

    def start(self) -> None:
        self.thread = threading.Thread(target=self.serve_forever, name="arena-web", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (a closed tab during a long poll: a broken pipe or
        a reset) is no error; anything else is kept in :attr:`errors`, never printed as a
        traceback over the game's output."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):
            self.errors.append(repr(exc)[:300])


class Handler(BaseHTTPRequestHandler):
    server: SeatServer
    protocol_version = "HTTP/1.1"
    timeout = READ_SECONDS  # the socket's timeout: StreamRequestHandler sets it

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # the terminal belongs to the game's output

    def _send(self, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if status >= 400:  # a refused request's connection ends with it (send_header sets close_connection)
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode(), "application/json; charset=utf-8")

    def _refuse(self, status: int, message: str, body: int | None) -> None:
        """Answer ``status`` and close the connection; a declared body of at most MAX_BODY bytes
        (``body``: its length, None when unknown) is read and dropped first, so the client
        sees the answer rather than a reset."""
        if body is not None and 0 < body <= MAX_BODY:
            self.rfile.read(body)
        self.close_connection = True
        self._json(status, {"error": message})

    def _framing(self) -> int | None:
        """The length of the request's body (0: none); None when its framing is refused (answered
        here, the connection closed: where the body ends is not known)."""
        if self.headers.get_all("Transfer-Encoding"):
            self._refuse(501, "send a body with Content-Length, not Transfer-Encoding", None)
            return None
        if len(self.headers.get_all("Host") or []) > 1:
            self._refuse(400, "one Host header", None)
            return None
        lengths = self.headers.get_all("Content-Length") or []
        length = whole_number(lengths[0].strip(), high=MAX_LENGTH, given="text") if len(lengths) == 1 else 0
        if len(lengths) > 1 or length is None:
            self._refuse(400, "at most one Content-Length, a number", None)
            return None
        return length

    def _route(self, body: int) -> str | None:
        """The path after the token, or None (answered 404/403 here) for a foreign request."""
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]").lower()
        bound = str(self.server.server_address[0])
        if bound in LOOPBACK and host not in LOOPBACK:
            self._refuse(403, "this server answers only requests to the loopback address", body)
            return None
        parts = urlsplit(self.path)
        prefix = f"/{self.server.token}/"
        if not parts.path.startswith(prefix) or not secrets.compare_digest(parts.path[: len(prefix)], prefix):
            self._refuse(404, "not found: open the address arena printed", body)
            return None
        return parts.path[len(prefix) :]

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = self._framing()
        if body is None:
            return
        if body:
            self._refuse(400, "a GET request has no body", body)
            return
        route = self._route(body)
        if route is None:
            return
        if route == "":
            self._send(
                200,
                self.server.page,
                "text/html; charset=utf-8",
                {
                    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; "
                    "style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:"
                },
            )
        elif route == "state":
            query = parse_qs(urlsplit(self.path).query)
            after = whole_number(query.get("after", [""])[0], high=2**31, given="text")
            after = -1 if after is None else after
            self._json(200, self.server.shared.snapshot(after, timeout=POLL_SECONDS if after >= 0 else 0.0))
        else:
            self._refuse(404, "not found", body)

    def do_POST(self) -> None:  # noqa: N802
        body = self._framing()
        if body is None:
            return
        route = self._route(body)
        if route is None:
            return
        if route != "act":
            self._refuse(404, "not found", body)
            return
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            self._refuse(415, "send the action as application/json", body)
            return
        if body == 0:
            self._refuse(411, "send the action with its Content-Length", None)
            return
        if body > MAX_BODY:
            self._refuse(413, f"an action is at most {MAX_BODY} bytes", None)  # not read: too long to wait for
            return
        try:
            data = json.loads(self.rfile.read(body))
            self.server.shared.send(data)
        except (ValueError, RecursionError, BadAction) as exc:
            self._refuse(400, str(exc)[:300] or "not an action", None)  # the body was read whole
            return
        self._json(202, {"ok": True})
