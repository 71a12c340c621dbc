"""Who is asking: bearer tokens for the API, signed sessions for the pages, CSRF tokens for forms,
and the limits on how often (failed sign-ins per client, uploads per author).

Every secret a client presents to sign in (a bearer token on any API, the sign-in form's token, a
guest link) is checked by :func:`signed`, which refuses an address past its failed sign-ins (429)
before looking and counts each failure; tokens are looked up by :func:`token_owner`
(:func:`arena.server.store.database.who`: hashes compared in constant time). Sessions are cookies signed by Starlette's
``SessionMiddleware`` (itsdangerous) with the contest's secret key; every form carries the
session's CSRF token, compared in constant time.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request

from ..store.authors import signed_out_key

T = TypeVar("T")

#: Failed sign-ins (bad tokens) a client may make per minute before it is told to wait (429).
FAILURES_PER_MINUTE = 30


class Failures:
    """Events per client address over the last ``window`` seconds (failed sign-ins a minute by
    default; uploads a minute, registrations a day), in memory: a restart forgives."""

    def __init__(self, limit: int = FAILURES_PER_MINUTE, what: str = "failed sign-ins", window: float = 60.0) -> None:
        self.limit = limit
        self.what = what
        self.window = window
        self.seen: dict[str, deque[float]] = {}

    def _recent(self, client: str) -> deque[float]:
        now = time.monotonic()
        q = self.seen.setdefault(client, deque())
        while q and q[0] < now - self.window:
            q.popleft()
        if not q:
            self.seen.pop(client, None)
            q = self.seen.setdefault(client, deque())
        return q

    def check(self, client: str) -> None:
        if len(self._recent(client)) >= self.limit:
            per = "a minute); wait a minute" if self.window <= 60 else f"in {self.window / 3600:g} hours); try later"
            raise HTTPException(
                429,
                f"too many {self.what} from this address (at most {self.limit} {per}",
                headers={"Retry-After": f"{self.window:.0f}"},
            )

    def add(self, client: str) -> None:
        self._recent(client).append(time.monotonic())
        if len(self.seen) > 10000:  # bounded memory whatever the number of addresses
            self.seen.pop(next(iter(self.seen)))

    def take(self, client: str) -> None:
        """:meth:`check` and :meth:`add` at once (no await between: requests sent together cannot
        all pass); :meth:`give_back` returns the place when what it was taken for did not happen.

        :raises HTTPException: 429, the address is at its limit."""
        self.check(client)
        self.add(client)

    def give_back(self, client: str) -> None:
        q = self.seen.get(client)
        if q:
            q.pop()


def client_of(conn: HTTPConnection) -> str:
    return conn.client.host if conn.client else "?"


async def signed(conn: HTTPConnection, verify: Callable[[], T | None]) -> T | None:
    """The one gate of every sign-in: ``verify()`` (run off the event loop) checks the secret the
    client presented and returns who it names, or None. An address past :data:`FAILURES_PER_MINUTE`
    failures is refused (429) before anything is checked, a right secret included; each None counts.

    :raises HTTPException: 429, too many failed sign-ins from this address.
    """
    failures: Failures = conn.app.state.failures
    client = client_of(conn)
    failures.check(client)
    found = await run_in_threadpool(verify)
    if found is None:
        failures.add(client)
    return found


async def token_owner(conn: HTTPConnection, token: str | None) -> tuple[str, int] | None:
    """Who ``token`` is (``("author", id)`` or ``("organiser", 0)``), through :func:`signed`: a
    missing token is a failed sign-in too. :raises HTTPException: 429 (see :func:`signed`)."""
    from ..store import database as store

    folder = conn.app.state.settings.folder

    def look() -> tuple[str, int] | None:
        if not token:
            return None
        db = store.open_db(folder)
        try:
            return store.who(db, token[:200])
        finally:
            db.close()

    return await signed(conn, look)


def bearer(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer T`` header, or None."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()[:200]


def session_who(conn: HTTPConnection) -> tuple[str, int] | None:
    """The signed-in role of a page request (the session cookie is signed: not forgeable)."""
    data: Any = conn.session.get("who")
    if isinstance(data, list) and len(data) == 2 and data[0] in ("author", "organiser") and isinstance(data[1], int):
        return (data[0], data[1])
    return None


def session_guest(conn: HTTPConnection) -> tuple[str, str, str] | None:
    """``("guest", id, name)`` of a session opened by a guest link still within its end time, or None."""
    guest: Any = conn.session.get("guest")
    if isinstance(guest, list) and len(guest) == 3 and all(isinstance(g, str | int) for g in guest):
        gid, name, end = guest
        if isinstance(end, int) and end >= time.time():
            return "guest", str(gid), str(name)
    return None


def csrf_token(conn: HTTPConnection) -> str:
    """The session's CSRF token (made on first use); every form carries it."""
    token = conn.session.get("csrf")
    if not isinstance(token, str) or len(token) < 20:
        token = secrets.token_urlsafe(32)
        conn.session["csrf"] = token
    return token


def check_csrf(conn: HTTPConnection, given: Any) -> None:
    """:raises HTTPException: 403 when the form's token is missing or is not the session's."""
    expected = conn.session.get("csrf")
    if (
        not isinstance(given, str)
        or not isinstance(expected, str)
        or not hmac.compare_digest(given.encode(), expected.encode())
    ):
        raise HTTPException(403, "the form's CSRF token is missing or wrong; reload the page and try again")


class SignOut:
    """Voids the sessions of a person who signed out after the session was made.

    A session lives in its signed cookie (Starlette's ``SessionMiddleware``), so signing out used to
    clear only the browser's copy: a copied cookie stayed valid for its 14 days. Signing out now
    records the time in the contest database, and any session of that person made before it is
    read as no session (signing out signs that person out everywhere). Runs inside the session
    middleware; one small database read per request of a signed-in person."""

    def __init__(self, app: Any, folder: Any) -> None:
        self.app = app
        self.folder = folder

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        session = scope.get("session") if scope["type"] in ("http", "websocket") else None
        if session and isinstance(session.get("who"), list):
            from starlette.concurrency import run_in_threadpool

            from ..store import database as store

            def out() -> str:
                db = store.open_db(self.folder)
                try:
                    return store.setting(db, signed_out_key(session["who"]))
                finally:
                    db.close()

            made, at = session.get("at"), await run_in_threadpool(out)
            try:
                cut = float(at) if at else None
            except ValueError:  # a damaged setting: void, to be safe
                cut = float("inf")
            if cut is not None and not (isinstance(made, (int, float)) and made > cut):
                session.clear()
        await self.app(scope, receive, send)
