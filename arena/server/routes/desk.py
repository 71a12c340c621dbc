"""The organiser's desk: the review queue, one submission's source (highlighted), its diff
against the author's previous version and its check report, approve / reject with a comment
the author sees, and freezing submissions. Every route needs the organiser's session."""

from __future__ import annotations

import difflib
import sqlite3
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ..contest.uploads import readable
from ..http.common import db_call, submission_view
from ..store import database as store
from .api import path_int
from .pages import form_fields, page, signed_in

#: Longest review comment kept.
COMMENT_CHARS = 2000


def highlighted(source: str) -> list[list[tuple[str, str]]]:
    """The source as lines of (token class, text), for the template to escape and colour."""
    from pygments.lexers import PythonLexer
    from pygments.token import STANDARD_TYPES

    lines: list[list[tuple[str, str]]] = [[]]
    for kind, text in PythonLexer().get_tokens(source):
        css = STANDARD_TYPES.get(kind) or STANDARD_TYPES.get(kind.parent, "")
        parts = text.split("\n")
        for i, part in enumerate(parts):
            if i:
                lines.append([])
            if part:
                lines[-1].append((css, part))
    if lines and not lines[-1]:
        lines.pop()
    return lines


def diff_lines(old: str, new: str) -> list[tuple[str, str]]:
    """A unified diff as (kind, line): kind is ``add``, ``del``, ``hunk`` or ``same``."""
    out = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), "previous", "this", lineterm="", n=3):
        if line.startswith(("+++", "---")):
            continue
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "same")
        out.append((kind, line))
    return out


def queue(db: sqlite3.Connection) -> dict[str, Any]:
    rows = db.execute(
        "SELECT s.id, s.bot, s.version, s.status, s.review, s.error, a.name AS author FROM submissions s "
        "JOIN authors a ON a.id = s.author ORDER BY (s.review = 'pending') DESC, s.id DESC LIMIT 500"
    ).fetchall()
    from ..contest.final import can_start, field, state

    return {
        "rows": [dict(r) for r in rows],
        "frozen": store.setting(db, "frozen") == "1",
        "final": state(db),
        "final_field": [r["bot"] for r in field(db)],
        "final_blocked": can_start(db),
    }


def review_data(db: sqlite3.Connection, sid: int) -> dict[str, Any] | None:
    row = store.submission(db, sid)
    if row is None:
        return None
    source = readable(store.source_bytes(row["source"]))  # any stored type; a program: its files one after another
    before = db.execute(
        "SELECT source, version FROM submissions WHERE bot = ? AND version < ? ORDER BY version DESC LIMIT 1",
        (row["bot"], row["version"]),
    ).fetchone()
    active = db.execute("SELECT 1 FROM bots WHERE name = ? AND active = ?", (row["bot"], sid)).fetchone()
    return {
        "sub": submission_view(row, active is not None),
        "author": store.author_name(db, int(row["author"])),
        "lines": highlighted(source),
        "previous": before["version"] if before else None,
        "diff": diff_lines(readable(store.source_bytes(before["source"])), source) if before else [],
    }


async def desk_page(request: Request) -> HTMLResponse:
    signed_in(request, "organiser")
    return page(request, "server_desk.html.j2", desk=await db_call(request, queue))


async def review_page(request: Request) -> HTMLResponse:
    signed_in(request, "organiser")
    data = await db_call(request, review_data, path_int(request, "id"))
    if data is None:
        raise HTTPException(404, "no such submission")
    return page(request, "server_review.html.j2", **data)


async def review_form(request: Request) -> Response:
    signed_in(request, "organiser")
    fields = await form_fields(request)
    verdict = fields.get("verdict")
    if verdict not in ("approved", "rejected"):
        raise HTTPException(400, "the verdict is approved or rejected")
    sid = path_int(request, "id")
    try:
        await db_call(request, store.review, sid, verdict, fields.get("comment", "")[:COMMENT_CHARS])
    except store.ContestError as exc:
        raise HTTPException(404, str(exc)) from None
    return RedirectResponse(f"/desk/{sid}", status_code=303)


async def freeze_form(request: Request) -> Response:
    signed_in(request, "organiser")
    fields = await form_fields(request)
    await db_call(request, store.set_setting, "frozen", "1" if fields.get("frozen") == "1" else "0")
    return RedirectResponse("/desk", status_code=303)


async def final_form(request: Request) -> Response:
    """Start the round-one final (frozen, approved versions), published at ``/final/``."""
    from ..contest.final import can_start, start

    signed_in(request, "organiser")
    await form_fields(request)

    def begin(db: sqlite3.Connection) -> str | None:
        with store.writing(db):  # checked and marked in one transaction: one final at a time
            why = can_start(db)
            if why is None:
                db.execute("INSERT OR REPLACE INTO contest VALUES ('final', ?)", ('{"state": "running"}',))
        return why

    why = await db_call(request, begin)
    if why is not None:
        raise HTTPException(409, why)
    start(request.app.state.settings.folder, request.app.state.settings)
    return RedirectResponse("/desk", status_code=303)
