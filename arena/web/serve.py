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
"""

from __future__ import annotations

import html
import json
import re
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .seat import BadAction, SeatState
from .view import asset

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_BODY = 4096
POLL_SECONDS = 20.0


def play_page(token: str) -> str:
    """The browser seat's page, everything inlined."""
    page = asset("play.html")
    parts = {
        "{{CSS}}": asset("table.css") + "\n" + asset("play.css"),
        "{{JS}}": asset("table.js") + "\n" + asset("play.js"),
        "{{TOKEN}}": html.escape(token),
    }
    return re.sub(r"\{\{[A-Z]+\}\}", lambda m: parts.get(m.group(0), m.group(0)), page)


class SeatServer(ThreadingHTTPServer):
    """Serves one :class:`SeatState` on ``host:port`` (port 0: any free port)."""

    daemon_threads = True

    def __init__(self, shared: SeatState, host: str = "127.0.0.1", port: int = 0) -> None:
        self.shared = shared
        self.token = secrets.token_urlsafe(18)
        self.page = play_page(self.token).encode()
        super().__init__((host, port), Handler)
        self.thread: threading.Thread | None = None

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


class Handler(BaseHTTPRequestHandler):
    server: SeatServer
    protocol_version = "HTTP/1.1"

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
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode(), "application/json; charset=utf-8")

    def _route(self) -> str | None:
        """The path after the token, or None (answered 404/403 here) for a foreign request."""
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]").lower()
        bound = str(self.server.server_address[0])
        if bound in LOOPBACK and host not in LOOPBACK:
            self._json(403, {"error": "this server answers only requests to the loopback address"})
            return None
        parts = urlsplit(self.path)
        prefix = f"/{self.server.token}/"
        if not parts.path.startswith(prefix) or not secrets.compare_digest(parts.path[: len(prefix)], prefix):
            self._json(404, {"error": "not found: open the address arena printed"})
            return None
        return parts.path[len(prefix) :]

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        route = self._route()
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
            try:
                after = int(query.get("after", ["-1"])[0])
            except ValueError:
                after = -1
            self._json(200, self.server.shared.snapshot(after, timeout=POLL_SECONDS if after >= 0 else 0.0))
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        route = self._route()
        if route is None:
            return
        if route != "act":
            self._json(404, {"error": "not found"})
            return
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            self._json(415, {"error": "send the action as application/json"})
            return
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if not 0 < length <= MAX_BODY:
            self._json(413, {"error": f"an action is at most {MAX_BODY} bytes"})
            return
        try:
            data = json.loads(self.rfile.read(length))
            self.server.shared.send(data)
        except (ValueError, BadAction) as exc:
            self._json(400, {"error": str(exc)})
            return
        self._json(202, {"ok": True})
