"""The organiser's console, at the top of the desk: the ladder (its state, its pace, pause and resume),
the server's health (:mod:`..workers.health`), and the authors (invite one: their token shown once;
disable or enable one). Every form carries the desk's CSRF token and needs the organiser's session;
each action is one line in the log (:mod:`..store.events`)."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ...authoring.check import NAME_PATTERN
from ..http.request import db_call
from ..ladder.pace import set_paused
from ..store import authors, events
from ..store import database as store
from ..workers import health
from .pages import form_fields, page, signed_in

#: Authors the console lists at most (the newest).
AUTHORS = 500


def people(db: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT a.id, a.name, a.disabled, (SELECT COUNT(*) FROM submissions s WHERE s.author = a.id) AS uploads, "
        "(SELECT COUNT(*) FROM bots b WHERE b.author = a.id) AS bots FROM authors a WHERE a.name != ? "
        "ORDER BY a.id DESC LIMIT ?",
        (authors.HOUSE_AUTHOR, AUTHORS),
    ).fetchall()
    return [
        {
            "name": str(row["name"]),
            "disabled": row["disabled"] is not None,
            "uploads": int(row["uploads"]),
            "bots": int(row["bots"]),
        }
        for row in rows
    ]


async def console_data(request: Request) -> dict[str, Any]:
    """What the console shows (the caller checked the organiser's session)."""
    state = request.app.state
    supervisor = getattr(state, "supervisor", None)

    def read(db: sqlite3.Connection) -> dict[str, Any]:
        return {"health": health.health(db, state.settings.folder, state.settings, supervisor), "people": people(db)}

    return await db_call(request, read)


def shown(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the template's formatters (sizes, durations, times of day)."""
    return {**data, "size": health.human, "ago": health.ago, "clock": clock}


def clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at))


async def ladder_form(request: Request) -> Response:
    """Pause (``paused=1``) or resume (``paused=0``) the ladder; its worker says so in the log."""
    signed_in(request, "organiser")
    fields = await form_fields(request)
    if fields.get("paused") not in ("0", "1"):
        raise HTTPException(400, "paused is 1 (pause the ladder) or 0 (resume it)")
    await db_call(request, set_paused, fields["paused"] == "1")
    return RedirectResponse("/desk#ladder", status_code=303)


async def invite_form(request: Request) -> HTMLResponse:
    """Invite an author: their token, shown on this page once (the database keeps its hash)."""
    signed_in(request, "organiser")
    fields = await form_fields(request)
    name = fields.get("name", "").strip()
    if not NAME_PATTERN.fullmatch(name):
        raise HTTPException(400, "an author's name is letters, digits, - or _, from a letter, at most 40")

    def add(db: sqlite3.Connection) -> str:
        token = store.invite(db, name)
        events.say(db, f"author {name} invited from the desk")
        return token

    try:
        token = await db_call(request, add)
    except store.ContestError as exc:
        raise HTTPException(409, str(exc)) from None
    return page(request, "server_invited.html.j2", name=name, token=token)


async def author_form(request: Request) -> Response:
    """Disable (``action=disable``) or enable (``action=enable``) the author ``name``."""
    signed_in(request, "organiser")
    fields = await form_fields(request)
    action, name = fields.get("action"), fields.get("name", "")
    if action not in ("disable", "enable"):
        raise HTTPException(400, "action is disable or enable")

    def change(db: sqlite3.Connection) -> None:
        if authors.set_disabled(db, name, action == "disable"):
            events.say(db, f"author {name} {action}d from the desk")

    try:
        await db_call(request, change)
    except store.ContestError as exc:
        raise HTTPException(404, str(exc)) from None
    return RedirectResponse("/desk#authors", status_code=303)


def routes() -> list[Any]:
    return [
        Route("/desk/ladder", ladder_form, methods=["POST"]),
        Route("/desk/invite", invite_form, methods=["POST"]),
        Route("/desk/authors", author_form, methods=["POST"]),
    ]
