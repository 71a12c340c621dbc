"""What a refusal or an error says to whoever asked (issue 30, item 4).

A person's browser (a request that accepts HTML: :func:`arena.server.http.request.wants_html`) gets a page in
the site's layout, with the refusal's status: what went wrong, what to do next (sign in, go back,
wait, the page that exists), each as a link. ``/api/`` routes and scripts get ``{"error": ...}``
as before. An unexpected error is a 500 that says so and shows nothing of it (the server's log
has the traceback). The app's exception handlers (:mod:`arena.server.http.app`), so every route, those of
other modules included, answers this way.
"""

from __future__ import annotations

import logging
import re
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Match

from ...trust.numbers import whole_number
from ...trust.text import escape
from ...web.render import render
from ..http.auth import session_who
from ..http.request import HEADERS, wants_html  # the 500 handler answers outside the app's middleware

#: What a 500 says (to a script and on the page): nothing of the error itself.
INTERNAL = "internal error (a bug in arena; the server's log has the details)"
#: A page's heading for a status.
HEADINGS = {
    400: "That request cannot be used",
    401: "Sign in first",
    403: "Not allowed",
    404: "Not found",
    405: "Not a page to open",
    409: "Not now",
    413: "Too large",
    415: "That request cannot be used",
    429: "Too many requests",
    500: "Something went wrong",
}
#: A site path in a refusal's text, "(/login)": shown as a link when it names a page of the site.
_PATH = re.compile(r"\((/[A-Za-z0-9_\-./]*)\)")


async def http_error(request: Request, exc: Exception) -> Response:
    """A refusal (an :class:`HTTPException` from a route, the router or the static files)."""
    assert isinstance(exc, HTTPException)
    headers = {**HEADERS, **(exc.headers or {})}
    if not wants_html(request):
        return JSONResponse({"error": escape(exc.detail, 600)}, status_code=exc.status_code, headers=headers)
    return error_page(request, exc.status_code, str(exc.detail), headers)


async def internal_error(request: Request, exc: Exception) -> Response:
    """An unexpected error: a 500 saying so, nothing of the error (Starlette logs it), counted among
    the last hour's errors on the organiser's console (:mod:`..store.events`)."""
    from starlette.concurrency import run_in_threadpool

    from ..store import events

    what = f"internal error answering {request.method} {request.url.path[:200]}: {type(exc).__name__}"
    try:
        await run_in_threadpool(events.say_in, request.app.state.settings.folder, what, "error")
    except Exception:  # noqa: BLE001 - the 500 goes out whatever the log could do
        pass
    if not wants_html(request):
        return JSONResponse({"error": INTERNAL}, status_code=500, headers=HEADERS)
    return error_page(request, 500, INTERNAL, dict(HEADERS))


def error_page(request: Request, status: int, detail: str, headers: dict[str, str]) -> HTMLResponse:
    """The page for a refusal: in the site's layout (:func:`.pages.page`, whatever the layout
    needs), else, when even that fails (a broken session, a broken template), a bare page that
    still says what happened."""
    from .pages import page

    context = what_next(request, status, detail, headers)
    try:
        answer = page(request, "server_error.html.j2", status, **context)
    except Exception:  # the error page must not fail in its turn (the log says why it did)
        logging.getLogger(__name__).exception("the error page for a %s could not be made in the layout", status)
        html = render("server_error.html.j2", me=None, csrf="", contest="arena", **context)
        answer = HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})
    answer.headers.update(headers)
    return answer


def what_next(request: Request, status: int, detail: str, headers: dict[str, str]) -> dict[str, Any]:
    """The page's words: a heading, the refusal's text (site paths as links), advice, and links."""
    path = request.url.path
    shown = path if len(path) <= 200 else path[:200] + "\u2026"
    me = who(request)
    page_here = opens(request, path)
    if detail == phrase(status) and status == 404:  # the router's own refusals say only the status
        detail = f"there is no page at {shown}"
    elif detail == phrase(status) and status == 405:
        detail = (
            f"{shown} does not take a {request.method[:20]} request"
            if page_here
            else f"{shown} is where a page's form is sent, not a page to open: use the form's button on its page"
        )
    back = back_link(request)
    links: list[tuple[str, str]] = []
    advice = ""
    if status == 401:
        advice = "Sign in with the token of your invitation (or the organiser's), then open this page again."
        if "guest" in detail:
            advice = "Sign in, or open the guest link the organiser gave you, then open this page again."
        links.append(("/login", "Sign in"))
    elif status == 403:
        links.append(("/login", "Sign in as someone else" if me else "Sign in"))
    elif status == 404:
        advice = "The address may be mistyped, or what it named is not there (any more)."
    elif status == 405 and page_here:
        links.append((path, "Open the page"))
    elif status == 413:
        advice = "Choose a smaller file, or send less."
    elif status == 429:
        if "wait" not in detail.lower():  # the refusal says how long already
            advice = f"Wait {duration(headers.get('Retry-After', ''))}, then try again."
    elif status >= 500:
        advice = "Not something you did: try again in a moment; if it happens again, tell the organiser."
    if back is not None:
        links.append((back, "Back to the page you came from"))
    links.append(("/", "The leaderboard"))
    return {
        "code": status,
        "heading": HEADINGS.get(status) or phrase(status) or "Refused",
        "message": linked(request, sentence(detail), {href for href, _ in links}),
        "advice": advice,
        "links": [(href, label) for n, (href, label) in enumerate(links) if href not in {h for h, _ in links[:n]}],
    }


def duration(retry_after: str) -> str:
    """A ``Retry-After`` of seconds as a person reads it ("a minute", "24 hours")."""
    seconds = whole_number(retry_after, high=10**9, given="text") or 60
    if seconds < 120:
        return "a minute" if seconds == 60 else f"{seconds} seconds"
    if seconds < 7200:
        return f"{seconds // 60} minutes"
    return f"{seconds // 3600} hours"


def phrase(status: int) -> str:
    """HTTP's name for ``status`` ("Not Found"), or ""."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def who(request: Request) -> tuple[str, int] | None:
    """The signed-in person, or None (also when the error left no session to read)."""
    try:
        return session_who(request)
    except AssertionError:  # no session in this request's scope
        return None


def sentence(text: str) -> str:
    """A refusal's text as a sentence: capitalised, ending with a stop."""
    text = text.strip() or "refused"
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def linked(request: Request, text: str, offered: set[str]) -> list[tuple[str, str]]:
    """``text`` in pieces, ``("text", ...)`` or ``("link", path)``: a ``(/path)`` that names a page
    of this site becomes a link, or goes when the page offers it as a button already (``offered``);
    any other stays text."""
    pieces: list[tuple[str, str]] = []
    at = 0
    for found in _PATH.finditer(text):
        path = found.group(1)
        if path in offered:
            pieces.append(("text", text[at : found.start()].rstrip()))
        elif opens(request, path):
            pieces += [("text", text[at : found.start()] + "("), ("link", path), ("text", ")")]
        else:
            continue
        at = found.end()
    pieces.append(("text", text[at:]))
    return [p for p in pieces if p[1]]


def opens(request: Request, path: str) -> bool:
    """Whether ``path`` is a page of this site (a GET route takes it): never another site's address."""
    if not local(path):
        return False
    scope = {"type": "http", "path": path, "method": "GET", "root_path": ""}
    return any(route.matches(scope)[0] == Match.FULL for route in request.app.router.routes)


def back_link(request: Request) -> str | None:
    """The page the person came from (its ``Referer`` on this site): a form's page after its post,
    the page with the link after a visit (unless it is this very page)."""
    referer = request.headers.get("referer", "")[:2000]
    try:
        parts = urlsplit(referer)
    except ValueError:
        return None
    if not parts.netloc or parts.netloc != request.headers.get("host", "") or not local(parts.path):
        return None
    back = parts.path + (f"?{parts.query}" if parts.query else "")
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return None if back == here and request.method in ("GET", "HEAD") else back


def local(path: str) -> bool:
    """Whether a link to ``path`` stays on this site: a path from the root, never ``//host`` nor
    ``/\\host`` (which browsers read as another site's address), no control character."""
    return (
        path.startswith("/")
        and not path.startswith("//")
        and "\\" not in path
        and all(c.isprintable() and c != " " for c in path)
    )
