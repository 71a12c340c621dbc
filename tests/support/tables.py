"""A person at a contest server's table, scripted: a guest's session cookie for the pages, the API
and the seat's websocket (tests/server/test_server_tables*.py)."""

from __future__ import annotations

import http.client
import json
import random
import time
from collections import deque
from typing import Any
from urllib.parse import urlsplit

from websockets.sync.client import ClientConnection, connect

from .server import Server


class Person:
    """A scripted client: a session cookie (from a guest link) for the pages, the API and the socket."""

    def __init__(self, server: Server, link: str) -> None:
        self.server = server
        status, headers, _ = self.call("GET", urlsplit(link).path)  # the path: a server need not take a full URL
        assert status == 303, status
        self.cookie = headers["set-cookie"].split(";", 1)[0]

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        sent = {**(headers or {})}
        if getattr(self, "cookie", None):
            sent["Cookie"] = self.cookie
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=sent)
        r = conn.getresponse()
        raw = r.read()
        got = {k.lower(): v for k, v in r.getheaders()}
        conn.close()
        kind = got.get("content-type", "")
        return r.status, got, json.loads(raw) if kind.startswith("application/json") else raw.decode()

    def socket(self, key: str, origin: str | None = None) -> ClientConnection:
        return connect(
            f"ws://127.0.0.1:{self.server.port}/ws/tables/{key}",
            additional_headers={"Cookie": self.cookie},
            origin=origin or self.server.url,  # type: ignore[arg-type]  # websockets takes a str
            open_timeout=30,
        )


def state_of(ws: ClientConnection, until: Any, bound: float = 120.0) -> dict[str, Any]:
    """The first state the socket sends that satisfies ``until`` (refusals are skipped)."""
    while True:
        msg = json.loads(ws.recv(timeout=bound))
        if "error" not in msg and until(msg):
            return msg


def error_of(ws: ClientConnection) -> str:
    while True:
        msg = json.loads(ws.recv(timeout=30))
        if "error" in msg:
            return str(msg["error"])


def a_move(st: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A legal action from the state alone (what a person may click)."""
    if st["puttable"]:
        card = rng.choice(st["puttable"])
        return {"action": "put", "card": card, "suit": rng.choice("schd") if card.startswith("j") else None}
    return {"action": "draw" if st["can_draw"] else "finish"}


def closed(st: dict[str, Any]) -> bool:
    return st.get("phase") == "closed"


def play(
    ws: ClientConnection,
    rng: random.Random,
    *,
    actions: int | None = None,
    until: Any = closed,
    bound: float = 120.0,
    state: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], int]:
    """Answer the seat's questions with legal actions until a state satisfies ``until`` or (``actions``)
    the seat is asked again after that many were sent: that state, and how many were sent. ``state``:
    the newest state already read from ``ws``."""
    sent, last, answered = 0, None, -1
    times: deque[float] = deque()  # the server closes a socket past 60 messages in 10 s: stay under it
    while True:
        msg = json.loads(ws.recv(timeout=bound)) if state is None else state
        state = None
        if "error" in msg:  # a refusal (an action that crossed a new state): answer the last state again
            answered = -1
        else:
            last = msg
            if until(msg):
                return msg, sent
        if last is None or last.get("phase") != "move" or last.get("resuming") or last["version"] == answered:
            continue
        if actions is not None and sent >= actions:
            return last, sent
        if len(times) >= 50:
            time.sleep(max(0.0, times.popleft() + 10.5 - time.monotonic()))
        ws.send(json.dumps(a_move(last, rng)))
        times.append(time.monotonic())
        sent, answered = sent + 1, last["version"]
