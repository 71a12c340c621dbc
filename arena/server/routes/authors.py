"""The author's dashboard's routes (issue 30, item 2; data in :mod:`.dashboard`).

Pages: ``/mine`` (my bots), ``/games/{key}/output`` (a game's own output of the reader's seats),
``/submissions/{id}/games/{game}`` (a smoke game its check kept, in the viewer at the bot's
seat). API: ``/api/mine``, ``/api/bots/{name}/games`` (public, paged and filtered),
``/api/games/{key}/output``. A bot's output goes to its author and the organiser only: any other
author, a guest and the public get a 404 for it, as for something that is not there (R10's rule
for printed output; docs/security/server.md "A bot's own output").
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse

from ...web.view import render_viewer, viewer_game
from ..http.auth import bearer
from ..http.request import db_call
from ..store import outputs
from . import dashboard
from .api import path_int, token_who, visible_submission
from .pages import page, signed_in

#: Why a game's output is refused to a reader who has no seat in it (said the same to everyone).
NOT_YOURS = "no bot of yours played in this game (a bot's output is its author's alone)"


async def optional_token(request: Request) -> dashboard.Reader:
    """The API caller by bearer token, or None without one. :raises HTTPException: 401, a wrong token."""
    return await token_who(request) if bearer(request) is not None else None


# -- my bots -------------------------------------------------------------------------------------


async def mine_page(request: Request) -> HTMLResponse:
    _, author = signed_in(request, "author")
    return page(request, "server_mine.html.j2", bots=await db_call(request, dashboard.my_bots, author))


async def get_mine(request: Request) -> JSONResponse:
    role, author = await token_who(request)
    if role != "author":
        raise HTTPException(403, "only an author has bots: sign in with an author's token")
    return JSONResponse({"bots": await db_call(request, dashboard.my_bots, author)})


# -- a bot's games -------------------------------------------------------------------------------


async def get_bot_games(request: Request) -> JSONResponse:
    """``/api/bots/{name}/games``: a page of the bot's games (public; with its author's token, which
    of its seats left output)."""
    flt = dashboard.game_filter(request)
    reader = await optional_token(request)
    name = str(request.path_params["name"])

    def read(db: Any) -> dict[str, Any] | None:
        if db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone() is None:
            return None
        return dashboard.bot_games(db, name, reader, flt)

    data = await db_call(request, read)
    if data is None:
        raise HTTPException(404, "no such bot")
    return JSONResponse({**data, "filter": flt.query()})


# -- a game's own output -------------------------------------------------------------------------


async def game_outputs(request: Request, reader: dashboard.Reader) -> list[dict[str, Any]]:
    """The seats of the game whose output ``reader`` may read. :raises HTTPException: 404, no such
    game, or none of its seats is the reader's."""
    shown = await db_call(request, dashboard.game_outputs, str(request.path_params["key"]), reader)
    if shown is None:
        raise HTTPException(404, "no such game")
    if not shown:
        raise HTTPException(404, NOT_YOURS)
    return shown


async def game_output_page(request: Request) -> HTMLResponse:
    me = signed_in(request)
    seats = await game_outputs(request, me)
    return page(request, "server_output.html.j2", key=str(request.path_params["key"]), seats=seats)


async def get_game_output(request: Request) -> JSONResponse:
    reader = await token_who(request)
    return JSONResponse({"game": str(request.path_params["key"]), "seats": await game_outputs(request, reader)})


# -- a smoke game its check kept -----------------------------------------------------------------


async def check_game_page(request: Request) -> HTMLResponse:
    """A smoke game of an upload's check, in the viewer at the checked bot's seat (its author sees
    what that seat saw, R10; the organiser the whole record), with the bot's output of the game."""
    role, author = signed_in(request)
    sid, game = path_int(request, "id"), str(request.path_params["game"])

    def read(db: Any) -> tuple[dict[str, Any], tuple[int, list[dict[str, Any]], str]] | None:
        view = visible_submission(db, sid, role, author)
        kept = outputs.check_game(db, sid, game) if view is not None else None
        return (view, kept) if view is not None and kept is not None else None

    found = await db_call(request, read)
    if found is None:
        raise HTTPException(404, "no such smoke game of yours (only those the bot faulted in are kept)")
    sub, (seat, events, _output) = found  # the output is on the submission's page
    shown = viewer_game(events) if role == "organiser" else viewer_game(events, seat=seat)
    title = f"Smoke game {game}: {sub['bot']} {sub['label']} at seat {seat}"
    back = (f"/submissions/{sid}", f"{sub['bot']} {sub['label']}")
    html = render_viewer([shown], title=title, seat=seat, back=back)
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})
