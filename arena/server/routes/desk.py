"""The organiser's desk: the review queue (marked by round), one submission's files highlighted by
their language, its diff against the author's previous version and its check report, approve (a
clean check only) / reject with a comment the author sees, and freezing submissions. Every route
needs the organiser's session.

A review page only renders the view the check worker made once and stored (:mod:`..contest.review`,
:mod:`..store.reviews`); before it is made, the files are shown plain (no lexer, no diff: the cost
of any other page)."""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from typing import Any

from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ...web.render import render
from ..contest import review as views
from ..http.common import db_call, report_parts, submission_view
from ..store import database as store
from ..store import reviews
from ..store.outputs import check_games_kept
from .api import path_int
from .pages import form_fields, page, signed_in

#: Longest review comment kept.
COMMENT_CHARS = 2000
#: The round of a submission: the last round opened at or before it (:func:`..contest.rounds.round_of`).
ROUND_OF = "(SELECT COALESCE(MAX(number), 1) FROM rounds WHERE first_submission <= s.id)"


def queue(db: sqlite3.Connection) -> dict[str, Any]:
    rows = db.execute(
        f"SELECT s.id, s.bot, s.version, s.status, s.review, s.error, a.name AS author, {ROUND_OF} AS round "
        "FROM submissions s JOIN authors a ON a.id = s.author "
        "ORDER BY round DESC, (s.review = 'pending') DESC, s.id DESC LIMIT 500"
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
    """What the review page shows but its files: the submission, its check report, its round, its
    previous version, and when its stored view was made (None: not yet)."""
    row = store.submission(db, sid)
    if row is None:
        return None
    active = db.execute("SELECT 1 FROM bots WHERE name = ? AND active = ?", (row["bot"], sid)).fetchone()
    before = reviews.previous(db, sid)
    number = db.execute(f"SELECT {ROUND_OF} FROM submissions s WHERE s.id = ?", (sid,)).fetchone()[0]
    sub = submission_view(row, active is not None)
    return {
        "sub": sub,
        "faults": report_parts(sub["report"]),
        "replays": list(check_games_kept(db, sid)),
        "author": store.author_name(db, int(row["author"])),
        "round": number,
        "previous": {"id": before[0], "version": before[1]} if before else None,
        "made": reviews.made(db, sid),
    }


def files_data(db: sqlite3.Connection, sid: int) -> tuple[dict[str, Any], bool]:
    """The stored view (:func:`..contest.review.shown`) and True; or, until it is made (or when what
    is stored is no view), the files plain and False: never a lexer or a diff here."""
    view = views.shown(reviews.load(db, sid))
    if view is not None:
        return view, True
    row = store.submission(db, sid)
    files, problem = views.files_of(str(row["bot"]) if row else "", store.source_bytes(row["source"] if row else b""))
    plain = views.shown(views.plain_view(files, problem))
    assert plain is not None  # made here, in the shape shown() reads
    return plain, False


#: Rendered diffs and files of review pages, kept: (contest folder, submission, when its view was made)
#: -> HTML. A stored view never changes once made; the page around it (verdict, comment) is made each time.
RENDERED: OrderedDict[tuple[str, int, float | None], Markup] = OrderedDict()
#: Characters of rendered HTML kept at most (a 256 KiB upload's page is a few MB).
RENDERED_CHARS = 48 * 2**20


async def files_html(request: Request, sid: int, data: dict[str, Any]) -> Markup:
    """The review page's diff and files: rendered from the stored view once, then kept."""
    key = (str(request.app.state.settings.folder), sid, data["made"])
    html = RENDERED.get(key)
    if html is None:
        view, ready = await db_call(request, files_data, sid)
        html = Markup(render("server_review_files.html.j2", view=view, ready=ready, previous=data["previous"]))
        RENDERED[key] = html
        if key[2] is not None:
            RENDERED.pop((key[0], sid, None), None)  # the plain page shown before the view was made
        while sum(len(h) for h in RENDERED.values()) > RENDERED_CHARS and len(RENDERED) > 1:
            RENDERED.popitem(last=False)
    RENDERED.move_to_end(key)
    return html


async def desk_page(request: Request) -> HTMLResponse:
    signed_in(request, "organiser")
    return page(request, "server_desk.html.j2", desk=await db_call(request, queue))


async def review_page(request: Request) -> HTMLResponse:
    signed_in(request, "organiser")
    sid = path_int(request, "id")
    data = await db_call(request, review_data, sid)
    if data is None:
        raise HTTPException(404, "no such submission")
    files = await files_html(request, sid, data)
    return page(request, "server_review.html.j2", refused=None, comment=data["sub"]["comment"], files=files, **data)


async def review_form(request: Request) -> Response:
    """Approve (a clean check only) or reject, with the comment the author reads. A verdict refused
    shows the page again with the reason and the comment as written (nothing typed is lost)."""
    signed_in(request, "organiser")
    fields = await form_fields(request)
    verdict = fields.get("verdict")
    if verdict not in ("approved", "rejected"):
        raise HTTPException(400, "the verdict is approved or rejected")
    sid, comment = path_int(request, "id"), fields.get("comment", "")[:COMMENT_CHARS]
    try:
        await db_call(request, store.review, sid, verdict, comment)
    except store.NotClean as exc:
        data = await db_call(request, review_data, sid)
        if data is None:
            raise HTTPException(404, "no such submission") from None
        files = await files_html(request, sid, data)
        return page(request, "server_review.html.j2", 409, refused=str(exc), comment=comment, files=files, **data)
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
