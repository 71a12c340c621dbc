"""What every route does with a request: the answer's security headers, whether it goes to a person
as a page or to a script as JSON, its body read bounded, a JSON object read safely, and database
access off the event loop."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request

from ...trust.numbers import whole_number
from ..store import database as store

T = TypeVar("T")

#: Security headers of every answer.
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
#: Bytes a multipart upload may add around the file (boundaries, headers, the CSRF field).
FORM_OVERHEAD = 16 * 1024
#: Largest body of any other request (sign-in, review forms, JSON).
SMALL_BODY = 64 * 1024


#: A q-value of an Accept header (RFC 9110: 0 to 1, three decimals at most); anything else counts as 0.
_QVALUE = re.compile(r"0(\.[0-9]{0,3})?|1(\.0{0,3})?")
#: What a browser names when it opens a page.
_HTML = ("text/html", "application/xhtml+xml")


def wants_html(conn: HTTPConnection) -> bool:
    """Whether a refusal goes to a person as a page: an HTTP request outside ``/api/`` whose Accept
    header names HTML (what a browser sends when it opens a page) at least as high as JSON. A
    script's ``*/*`` (curl, urllib, ``fetch``) or ``application/json``, and every ``/api/`` route,
    get JSON."""
    if conn.scope.get("type") != "http" or conn.url.path.startswith("/api/"):
        return False
    html = json_q = 0.0
    for part in conn.headers.get("accept", "")[:4096].split(",")[:64]:
        kind, *params = (p.strip().lower() for p in part.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                q = float(value.strip()) if _QVALUE.fullmatch(value.strip()) else 0.0
        if kind in _HTML:
            html = max(html, q)
        elif kind == "application/json":
            json_q = max(json_q, q)
    return html > 0 and html >= json_q


def json_object(body: bytes) -> dict[str, Any]:
    """A request's JSON object; {} for anything else (not JSON, not UTF-8, nested past the parser's depth)."""
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


async def db_call(conn: HTTPConnection, fn: Callable[..., T], *args: Any) -> T:
    """``fn(db, *args)`` on a connection of its own, in a worker thread (never blocking the loop);
    ``conn`` is a request or a websocket."""
    folder: Path = conn.app.state.settings.folder

    def call() -> T:
        db = store.open_db(folder)
        try:
            return fn(db, *args)
        finally:
            db.close()

    return await run_in_threadpool(call)


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused with 413 past ``limit`` bytes (declared or sent)."""
    declared = whole_number(request.headers.get("content-length", ""), given="text")
    if declared is not None and declared > limit:
        raise HTTPException(413, f"the request is larger than {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"the request is larger than {limit} bytes")
        chunks.append(chunk)
    body = b"".join(chunks)
    request._body = body  # the form parser reads these bytes, never the stream again
    return body
