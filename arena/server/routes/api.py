"""The JSON API: uploads, their checks, the leaderboard, the active version, registration.

Every answer is JSON; every refusal a 4xx with ``{"error": "..."}`` (:mod:`arena.server.http.app`)."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from ...trust.numbers import whole_number
from ..contest import rounds
from ..http.auth import bearer, client_of, token_owner
from ..http.request import FORM_OVERHEAD, SMALL_BODY, db_call, json_object, read_body
from ..http.settings import ServerSettings
from ..store import database as store
from ..store import versions
from ..store.outputs import check_games_kept
from .views import bot_name, submission_view


async def token_who(request: Request) -> tuple[str, int]:
    """The caller of an API route, by bearer token. :raises HTTPException: 401 (or 429: too many failures)."""
    found = await token_owner(request, bearer(request))
    if found is None:
        raise HTTPException(401, "a valid token is needed: Authorization: Bearer TOKEN", {"WWW-Authenticate": "Bearer"})
    return found


async def upload_bytes(request: Request, limit: int) -> tuple[bytes, str | None, dict[str, Any]]:
    """The uploaded file (multipart field ``bot``, or the raw body), its file name and the form's other fields."""
    too_big = f"the bot file is larger than {limit} bytes ({limit / 1024:g} KiB), the most a bot may have"
    try:
        body = await read_body(request, limit + FORM_OVERHEAD)
    except HTTPException as exc:  # the form's own bytes are few: the file is what is too large
        if exc.status_code == 413:
            raise HTTPException(413, too_big) from None
        raise
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await request.form(max_files=1, max_fields=8)
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        part = form.get("bot")
        if not isinstance(part, UploadFile):
            raise HTTPException(400, "the form has no file field named 'bot'")
        data = await part.read(limit + 1)
        filename = part.filename
    else:
        data, filename, fields = body, request.query_params.get("name"), {}
    if len(data) > limit:
        raise HTTPException(413, too_big)
    if not data.strip():
        raise HTTPException(400, "the upload is empty")
    return data, filename, fields


def too_many(settings: ServerSettings) -> str:
    return f"at most {settings.uploads_per_minute} uploads a minute; wait a little"


async def accept_upload(request: Request, author: int, data: bytes, filename: str | None) -> int:
    """Store an upload for its check, within the limits per author (counted in the insert's own
    transaction) and per client address; the bot name's owner is checked too.

    :raises versions.Identical: the bytes of a version of this round (no new version: ruling 145)."""
    settings: ServerSettings = request.app.state.settings
    request.app.state.uploads.check(client_of(request))
    request.app.state.uploads.add(client_of(request))  # counted before any wait: no race past the limit
    if await db_call(request, store.uploads_since, author, time.time() - 60) >= settings.uploads_per_minute:
        raise HTTPException(429, too_many(settings), {"Retry-After": "60"})  # before the parse (up to 0.6 s of CPU)
    from ...errors import BotLoadError
    from ..contest.uploads import as_stored

    try:  # a .js file bundled as the loader bundles it; a program's bundle checked whole
        data = as_stored(data, filename)
    except BotLoadError as exc:
        raise HTTPException(400, f"{filename or 'the upload'}: {exc.message}") from None
    if len(data) > request.app.state.settings.max_upload:
        raise HTTPException(413, f"the bot, stored, is larger than {request.app.state.settings.max_upload} bytes")
    name = bot_name(data, filename)
    try:
        sid = await db_call(request, store.add_submission, author, name, data, settings.uploads_per_minute)
    except store.TooMany as exc:
        raise HTTPException(429, str(exc), {"Retry-After": "60"}) from None
    except store.ContestError as exc:
        raise HTTPException(409, str(exc)) from None
    return sid


async def post_submission(request: Request) -> JSONResponse:
    role, author = await token_who(request)
    if role != "author":
        raise HTTPException(403, "only an author uploads bots")
    data, filename, _ = await upload_bytes(request, request.app.state.settings.max_upload)
    try:
        sid = await accept_upload(request, author, data, filename)
    except versions.Identical as same:  # 200, not 202: nothing new is queued; the version it is
        return JSONResponse(
            {
                "id": same.submission,
                "version": same.version,
                "label": versions.label(same.version),
                "status": same.status,
                "identical": True,
                "message": str(same),
                "url": f"/api/submissions/{same.submission}",
            }
        )
    row = await db_call(request, store.submission, sid)
    status = str(row["shown"]) if row is not None else "queued"  # 'building' when its build waits
    return JSONResponse({"id": sid, "status": status, "url": f"/api/submissions/{sid}"}, status_code=202)


def visible_submission(db: sqlite3.Connection, sid: int, role: str, author: int) -> dict[str, Any] | None:
    row = store.submission(db, sid)
    if row is None or (role != "organiser" and int(row["author"]) != author):
        return None
    active = db.execute("SELECT 1 FROM bots WHERE name = ? AND active = ?", (row["bot"], sid)).fetchone()
    kept = check_games_kept(db, sid)  # the smoke games it faulted in, to replay, and its output in each
    return {
        **submission_view(row, active is not None),
        "replays": [{"game": g, "url": f"/submissions/{sid}/games/{g}", "output": text} for g, text in kept.items()],
    }


def path_int(request: Request, name: str) -> int:
    number = whole_number(request.path_params.get(name, ""), given="text")
    if number is None:
        raise HTTPException(404, f"no such {name}")
    return number


async def get_submission(request: Request) -> JSONResponse:
    role, author = await token_who(request)
    view = await db_call(request, visible_submission, path_int(request, "id"), role, author)
    if view is None:  # someone else's upload is as absent as a missing one
        raise HTTPException(404, "no such submission of yours")
    return JSONResponse(view)


def round_param(request: Request) -> int | None:
    """``?round=N``: a round's number (None: the current round). :raises HTTPException: 404, not a round's number."""
    text = request.query_params.get("round")
    if text is None:
        return None
    number = whole_number(text, given="text")
    if number is None:
        raise HTTPException(404, "no such round: ?round=N takes a round's number")
    return number


async def board_of(request: Request) -> dict[str, Any]:
    """The leaderboard of the round ``?round=N`` asks for (the current one by default: the shared board)."""
    number = round_param(request)
    try:
        if number is None:
            board: dict[str, Any] = await run_in_threadpool(request.app.state.board.get)
            return board
        return await db_call(request, rounds.leaderboard, number)
    except store.ContestError as exc:
        raise HTTPException(404, str(exc)) from None


async def get_leaderboard(request: Request) -> JSONResponse:
    return JSONResponse(await board_of(request))


async def post_active(request: Request) -> JSONResponse:
    """``{"submission": ID}``: the author's choice of the version that plays."""
    role, author = await token_who(request)
    chosen = json_object(await read_body(request, SMALL_BODY)).get("submission")
    sid = whole_number(chosen, given="json")  # a JSON number, not a string of digits
    if sid is None:
        raise HTTPException(400, 'send {"submission": ID} as JSON')
    await choose_active(request, role, author, request.path_params["name"], sid)
    return JSONResponse({"bot": request.path_params["name"], "active": sid})


async def choose_active(request: Request, role: str, author: int, bot: str, sid: int) -> None:
    owner = await db_call(request, lambda db: db.execute("SELECT author FROM bots WHERE name = ?", (bot,)).fetchone())
    if owner is None or (role != "organiser" and int(owner[0]) != author):
        raise HTTPException(404, "no such bot of yours")
    try:
        await db_call(request, store.set_active, bot, sid)
    except store.ContestError as exc:
        raise HTTPException(409, str(exc)) from None


async def post_register(request: Request) -> JSONResponse:
    """``{"name": NAME}`` -> a new author's token, when the server runs with ``--open-registration``."""
    if not request.app.state.settings.open_registration:
        raise HTTPException(403, "registration is by invitation only on this server")
    name = json_object(await read_body(request, SMALL_BODY)).get("name")
    token = await register(request, name)
    return JSONResponse({"name": name, "token": token}, status_code=201)


async def register(request: Request, name: Any) -> str:
    """A new author ``name`` (open registration), within the registrations of the client's address
    (``--registrations-per-address`` a day: one address cannot make authors by the dozen to
    multiply the limits kept per author)."""
    from ...authoring.check import NAME_PATTERN

    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise HTTPException(400, "an author name is letters, digits, - or _, from a letter, at most 40")
    client = client_of(request)
    request.app.state.failures.check(client)  # an address guessing tokens registers nothing either
    request.app.state.registrations.take(client)  # taken before the wait: no race past the cap
    try:
        return await db_call(request, store.invite, name)
    except store.ContestError as exc:
        request.app.state.registrations.give_back(client)  # no author made: the place is not used
        raise HTTPException(409, str(exc)) from None
