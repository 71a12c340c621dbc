"""The organiser's desk: the console (:mod:`.console`: the ladder, the server's health, the authors), the
review queue (marked by round), one submission's files highlighted by
their language, its diff against the author's previous version and its check report, approve (a
clean check only) / reject with a comment the author sees, freezing submissions, the house bots,
and each round's final (its settings, line-up, progress; resumed after a stop). Every route needs
the organiser's session.

A review page only renders the view the check worker made once and stored (:mod:`..contest.review`,
:mod:`..store.reviews`); before it is made, the files are shown plain (no lexer, no diff: the cost
of any other page)."""

from __future__ import annotations

import re
import sqlite3
from collections import OrderedDict
from pathlib import Path
from typing import Any

from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ...trust.numbers import whole_number
from ...web.render import render
from ..contest import final, lineup, publish
from ..contest import review as views
from ..contest.final import FinalSettings
from ..http.auth import check_csrf
from ..http.request import SMALL_BODY, db_call, read_body
from ..store import builds, reviews
from ..store import database as store
from ..store.outputs import check_games_kept
from .api import path_int
from .pages import form_fields, page, signed_in
from .views import report_parts, submission_view

#: Longest review comment kept.
COMMENT_CHARS = 2000
#: The round of a submission: the last round opened at or before it (:func:`..contest.rounds.round_of`).
ROUND_OF = "(SELECT COALESCE(MAX(number), 1) FROM rounds WHERE first_submission <= s.id)"


def queue(db: sqlite3.Connection, folder: Path) -> dict[str, Any]:
    from ..contest.house import listing, registered_names
    from ..contest.rounds import current_number

    rows = db.execute(
        f"SELECT s.id, s.bot, s.version, {builds.STATUS} AS status, s.review, s.error, a.name AS author, "
        f"{ROUND_OF} AS round, (SELECT house FROM bots b WHERE b.name = s.bot) IS NOT NULL AS house "
        f"{builds.JOIN} JOIN authors a ON a.id = s.author "
        "ORDER BY round DESC, (s.review = 'pending') DESC, s.id DESC LIMIT 500"
    ).fetchall()
    house = listing(db)
    return {
        "rows": [dict(r) for r in rows],
        "frozen": store.setting(db, "frozen") == "1",
        "finals": [finals_data(db, folder, n) for n in final.ROUNDS if n <= current_number(db)],
        "house": house,
        "registered": [n for n in registered_names() if n not in {h.name for h in house if h.playing}],
    }


def finals_data(db: sqlite3.Connection, folder: Path, number: int) -> dict[str, Any]:
    """Round ``number``'s final as the desk shows it: its state, settings, progress and line-up."""
    data = final.state(db, number)
    settings = final.settings_of(data)
    return {
        "round": number,
        "word": final.ORDINAL.get(number, str(number)),
        "state": final.current_state(db, number),
        "detail": data.get("detail") or "",
        "settings": settings.described() if settings else None,
        "games": final.progress(folder, number),
        "pool": lineup.pool(db, number),
        "blocked": lineup.can_start(db, number),
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
    from .console import console_data, shown

    signed_in(request, "organiser")
    console = shown(await console_data(request))
    folder = request.app.state.settings.folder
    return page(request, "server_desk.html.j2", desk=await db_call(request, queue, folder), console=console)


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


#: Table sizes as the desk's form gives them: ``2-6``, ``2,4`` (ASCII digits 2 to 6 only).
SIZES = re.compile(r"[2-6](-[2-6])?(,[2-6](-[2-6])?)*")


def final_settings(fields: dict[str, str], entrants: list[str]) -> FinalSettings:
    """The desk's final form as settings (each field checked as untrusted text).

    :raises HTTPException: 400, a field that is no setting."""
    from ...tournament.plan.schedule import MAX_DEALS, parse_sizes

    players = fields.get("players", "").replace(" ", "")
    if players and not SIZES.fullmatch(players):
        raise HTTPException(400, "table sizes are like 2-6 or 2,4 (2 to 6)")
    numbers: dict[str, int | None] = {}
    for name, high in (("games", MAX_DEALS), ("budget", 10_000_000)):
        text = fields.get(name, "").strip()
        numbers[name] = whole_number(text, 1, high, given="text") if text else None
        if text and numbers[name] is None:
            raise HTTPException(400, f"{name} is a whole number from 1 to {high}")
    fixed = fields.get("mode") == "fixed"
    return FinalSettings(
        players=parse_sizes(players) if players else None,
        until_separated=not fixed,
        games=numbers["games"],
        budget=None if fixed else numbers["budget"],
        house=fields.get("house") == "1",
        entrants=tuple(entrants),
    )


async def final_form(request: Request) -> Response:
    """Start round N's final with the form's settings, or resume it with the stored ones (``resume``);
    it runs in its own process and is published at ``/final/N/``."""
    signed_in(request, "organiser")
    await read_body(request, SMALL_BODY)
    form = await request.form(max_files=0, max_fields=200)
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    check_csrf(request, fields.get("csrf"))
    number = whole_number(fields.get("round", ""), 1, max(final.ROUNDS), given="text")
    if number is None:
        raise HTTPException(400, "no such round's final")
    chosen = [v for v in form.getlist("entrant") if isinstance(v, str)]
    settings = None if fields.get("resume") == "1" else final_settings(fields, chosen)
    why, _ = await db_call(request, lineup.begin, number, settings)
    if why is not None:
        raise HTTPException(409, why)
    folder = request.app.state.settings.folder
    proc = publish.start(folder, number, request.app.state.settings)
    request.app.state.finals.append(proc)
    await db_call(request, lambda db: final.update_state(db, number, pid=proc.pid))
    return RedirectResponse("/desk#final", status_code=303)


async def house_form(request: Request) -> Response:
    """Put a registered bot in the house, or take a house bot off the ladder. (A bot file is added
    from the command line only: no page names a file of the server.)"""
    from ..contest import house

    signed_in(request, "organiser")
    fields = await form_fields(request)
    name, remove = fields.get("name", ""), fields.get("action") == "remove"
    if not remove and name not in house.registered_names():
        raise HTTPException(400, "choose a registered bot to add")
    try:
        await db_call(request, house.remove if remove else house.add, [name])
    except store.ContestError as exc:
        raise HTTPException(409, str(exc)) from None
    return RedirectResponse("/desk#house", status_code=303)
