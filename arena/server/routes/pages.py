"""The site's pages (templates in arena/web/templates/, server_*.html.j2) and the live leaderboard.

A page shows a game or a fault as R10 allows its reader (:mod:`arena.game.visibility`): the
public view to everyone, a seat's own view (its cards, its faults' details, its printed
output) to the author of the bot in that seat, the whole record to the organiser.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections import OrderedDict
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from ...game.visibility import PUBLIC, game_seen_by
from ...trust.numbers import whole_number
from ...web.render import render
from ...web.view import render_viewer, viewer_game
from ..http.auth import check_csrf, client_of, csrf_token, session_guest, session_who, token_owner
from ..http.common import SMALL_BODY, db_call, read_body, stored_faults, stored_seating, wants_html
from ..store import database as store
from ..store.authors import signed_out_key
from .api import accept_upload, board_of, choose_active, path_int, register, upload_bytes, visible_submission


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    me = session_who(request)
    html = render(template, me=me, csrf=csrf_token(request), contest=request.app.state.contest, **context)
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})


def signed_in(request: Request, role: str | None = None) -> tuple[str, int]:
    me = session_who(request)
    if me is None or (role is not None and me[0] != role):
        who = {"author": " as an author", "organiser": " as the organiser"}.get(role or "", "")
        raise HTTPException(401 if me is None else 403, f"sign in{who} first (/login)")
    return me


async def form_fields(request: Request) -> dict[str, str]:
    await read_body(request, SMALL_BODY)
    form = await request.form(max_files=0, max_fields=8)
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    check_csrf(request, fields.get("csrf"))
    return fields


async def leaderboard_page(request: Request) -> HTMLResponse:
    return page(request, "server_leaderboard.html.j2", board=await board_of(request))


async def live_leaderboard(ws: WebSocket) -> None:
    """Sends the leaderboard now and again whenever a game or an upload changes it."""
    state, settings, client = ws.app.state, ws.app.state.settings, client_of(ws)
    mine = state.live_by.get(client, 0)
    if state.live >= settings.max_live or mine >= settings.max_live_per_address:  # bounded, and per address
        await ws.close(code=1013)
        return
    state.live += 1
    state.live_by[client] = mine + 1
    try:
        await ws.accept()
        await follow(ws)
    finally:
        state.live -= 1
        state.live_by[client] -= 1
        if not state.live_by[client]:
            del state.live_by[client]


async def follow(ws: WebSocket) -> None:
    """Sends the shared board (:mod:`arena.server.ladder.board`: no query per socket) on a timer; what the client
    sends is read and dropped (it cannot make the server look again), and its close ends the loop
    at once."""

    async def drain() -> None:
        try:
            while (await ws.receive()).get("type") != "websocket.disconnect":
                pass
        except (WebSocketDisconnect, RuntimeError, OSError):
            return

    reader = asyncio.ensure_future(drain())
    last = None
    try:
        while not reader.done():
            board = await asyncio.to_thread(ws.app.state.board.text)
            if board != last:
                await ws.send_text(board)
                last = board
            await asyncio.wait({reader}, timeout=ws.app.state.settings.live_seconds)
    except (WebSocketDisconnect, RuntimeError, OSError, store.ContestError):  # a damaged round: no board
        return
    finally:
        reader.cancel()


#: Games (their ratings, faults) and versions a bot's page shows at most: its latest.
HISTORY = 500


def bot_data(db: sqlite3.Connection, name: str, me: tuple[str, int] | None) -> dict[str, Any] | None:
    bot = db.execute(
        "SELECT b.name, b.author, b.active, a.name AS who FROM bots b JOIN authors a ON a.id = b.author "
        "WHERE b.name = ?",
        (name,),
    ).fetchone()
    if bot is None:
        return None
    own = me is not None and (me[0] == "organiser" or (me[0] == "author" and me[1] == bot["author"]))
    versions = [
        {
            "id": r["id"],
            "version": r["version"],
            "status": r["status"],
            "review": r["review"],
            "active": r["id"] == bot["active"],
            "error": r["error"] if own else None,
            "comment": r["comment"] if own else "",
        }
        for r in db.execute("SELECT * FROM submissions WHERE bot = ? ORDER BY version DESC LIMIT ?", (name, HISTORY))
    ]
    recent = db.execute(  # the latest seats first, then their games: the same cost after 100 games or 100 000
        "SELECT s.game, s.seat, s.place, CAST(s.mu AS REAL) AS mu, CAST(s.sigma AS REAL) AS sigma, "
        "g.seating, g.faults, b.round FROM (SELECT rowid AS n, * FROM seats "
        "WHERE submission IN (SELECT id FROM submissions WHERE bot = ?) ORDER BY rowid DESC LIMIT ?) s "
        "JOIN games g ON g.key = s.game LEFT JOIN blocks b ON b.id = g.block ORDER BY s.n DESC",
        (name, HISTORY),
    ).fetchall()
    # Ratings are kept per round (ruling 84): the chart draws the latest round's only.
    latest = recent[0]["round"] if recent else None
    history = [
        {"game": r["game"], "ordinal": round(r["mu"] - 3 * r["sigma"], 3)}
        for r in reversed(recent)
        if r["round"] == latest
    ]
    games = [
        {"key": r["game"], "players": len(stored_seating(r["seating"])), "place": r["place"], "seat": r["seat"]}
        for r in recent[:50]
    ]
    faults: list[dict[str, Any]] = []
    for r in recent:  # only a row with faults is parsed (most have none), and only until 50 are shown
        if len(faults) >= 50:
            break
        if r["faults"] == "[]":
            continue
        for seat, kind, detail, rnd in stored_faults(r["faults"]):
            if seat == r["seat"] and kind != "retired" and len(faults) < 50:
                faults.append({"game": r["game"], "kind": kind, "round": rnd, "detail": detail if own else None})
    return {
        "name": bot["name"],
        "author": bot["who"],
        "own": own,
        "versions": versions,
        "games": games,
        "faults": faults,
        "chart": {**chart(history), "round": latest, "earlier": any(r["round"] != latest for r in recent)},
    }


def chart(history: list[dict[str, Any]], width: int = 600, height: int = 160) -> dict[str, Any]:
    """The rating history as an SVG polyline's points (numbers only)."""
    values = [h["ordinal"] for h in history]
    if len(values) < 2:
        return {"points": "", "width": width, "height": height, "low": None, "high": None}
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = width / (len(values) - 1)
    points = " ".join(
        f"{i * step:.1f},{height - (v - low) / span * (height - 10) - 5:.1f}" for i, v in enumerate(values)
    )
    return {"points": points, "width": width, "height": height, "low": low, "high": high, "count": len(values)}


#: Public bot pages' data, kept as the leaderboard is (at most FRESH_SECONDS old): (folder, name) -> (when, data).
PUBLIC_BOTS: OrderedDict[tuple[str, str], tuple[float, dict[str, Any]]] = OrderedDict()


async def bot_page(request: Request) -> HTMLResponse:
    from ..ladder.board import FRESH_SECONDS

    me, name = session_who(request), str(request.path_params["name"])
    cached = (str(request.app.state.settings.folder), name) if me is None else None
    kept = PUBLIC_BOTS.get(cached) if cached else None  # only the public view is shared between readers
    if kept is not None and time.monotonic() - kept[0] < FRESH_SECONDS:
        data: dict[str, Any] | None = kept[1]
    else:
        data = await db_call(request, bot_data, name, me)
        if cached and data is not None:
            PUBLIC_BOTS[cached] = (time.monotonic(), data)
            PUBLIC_BOTS.move_to_end(cached)
            while len(PUBLIC_BOTS) > PUBLIC_GAMES_KEPT:
                PUBLIC_BOTS.popitem(last=False)
    if data is None:
        raise HTTPException(404, f"there is no bot called {name[:60]!r}")
    return page(request, "server_bot.html.j2", bot=data)


def game_data(db: sqlite3.Connection, key: str, me: tuple[str, int] | None) -> dict[str, Any] | None:
    row = db.execute("SELECT seating, log FROM games WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    events = store.unpack(row["log"])
    if not events:
        return None
    if me is not None and me[0] == "organiser":
        return viewer_game(events)
    if me is not None:
        seating = stored_seating(row["seating"])
        owners = [db.execute("SELECT author FROM submissions WHERE id = ?", (s,)).fetchone() for s in seating]
        mine = [s for s, o in enumerate(owners) if o is not None and int(o[0]) == me[1]]
        if mine:
            return viewer_game(events, seat=mine[0])
    return viewer_game(game_seen_by(events, PUBLIC))


#: Public game pages kept rendered (a stored game never changes): (contest folder, key) -> HTML.
PUBLIC_GAMES: OrderedDict[tuple[str, str], str] = OrderedDict()
#: How many public game pages are kept (about 50 KB each).
PUBLIC_GAMES_KEPT = 128


async def game_page(request: Request) -> HTMLResponse:
    me = session_who(request)
    cached = (str(request.app.state.settings.folder), str(request.path_params["key"])) if me is None else None
    html = PUBLIC_GAMES.get(cached) if cached else None  # only the public view is shared between readers
    if html is None:
        game = await db_call(request, game_data, request.path_params["key"], me)
        if game is None:
            raise HTTPException(404, f"there is no game {str(request.path_params['key'])[:80]!r}")
        html = render_viewer([game], title=f"Game {game['id']}", back=("/", "Leaderboard"))
        if cached:
            PUBLIC_GAMES[cached] = html
            while len(PUBLIC_GAMES) > PUBLIC_GAMES_KEPT:
                PUBLIC_GAMES.popitem(last=False)
    elif cached:
        PUBLIC_GAMES.move_to_end(cached)
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


async def login_page(request: Request) -> HTMLResponse:
    registration = request.app.state.settings.open_registration
    return page(request, "server_login.html.j2", registration=registration, refused=None)


async def login(request: Request) -> Response:
    request.app.state.failures.check(client_of(request))  # before the form is read
    fields = await form_fields(request)
    found = await token_owner(request, fields.get("token", "").strip())
    if found is None:
        why = "that token is not valid here"
        if wants_html(request):  # the form again, saying so: a person tries again at once
            registration = request.app.state.settings.open_registration
            return page(request, "server_login.html.j2", 401, registration=registration, refused=why)
        raise HTTPException(401, why)
    request.session.clear()
    request.session["who"] = list(found)
    request.session["at"] = time.time()  # a sign-out after this voids the session (auth.SignOut)
    csrf_token(request)  # a fresh CSRF token with the new session
    return RedirectResponse("/desk" if found[0] == "organiser" else "/upload", status_code=303)


async def logout(request: Request) -> Response:
    await form_fields(request)
    me, guest = session_who(request), session_guest(request)
    if me is not None:  # every session of this person made until now is void, copies included
        await db_call(request, store.set_setting, signed_out_key(me), repr(time.time()))
    person = me or (guest[:2] if guest else None)
    if person is not None:  # and every socket acting for them ends now (auth.SignOut: none opens again)
        request.app.state.sockets.close_person(person)
    request.session.clear()
    return RedirectResponse("/", status_code=303)


async def register_form(request: Request) -> HTMLResponse:
    if not request.app.state.settings.open_registration:
        raise HTTPException(403, "registration is by invitation only on this server")
    fields = await form_fields(request)
    token = await register(request, fields.get("name"))
    return page(request, "server_token.html.j2", name=fields.get("name"), token=token)


async def upload_page(request: Request) -> HTMLResponse:
    signed_in(request, "author")
    frozen = await db_call(request, lambda db: store.setting(db, "frozen") == "1")
    return page(request, "server_upload.html.j2", frozen=frozen)


async def upload_form(request: Request) -> Response:
    _, author = signed_in(request, "author")
    data, filename, fields = await upload_bytes(request, request.app.state.settings.max_upload)
    check_csrf(request, fields.get("csrf"))
    sid = await accept_upload(request, author, data, filename)
    return RedirectResponse(f"/submissions/{sid}", status_code=303)


async def submission_page(request: Request) -> HTMLResponse:
    role, author = signed_in(request)
    view = await db_call(request, visible_submission, path_int(request, "id"), role, author)
    if view is None:
        raise HTTPException(404, "no such submission of yours")
    return page(request, "server_submission.html.j2", sub=view)


async def active_form(request: Request) -> Response:
    role, author = signed_in(request)
    fields = await form_fields(request)
    sid = whole_number(fields.get("submission", ""), given="text")
    if sid is None:
        raise HTTPException(400, "choose a submission")
    await choose_active(request, role, author, request.path_params["name"], sid)
    return RedirectResponse(f"/bots/{request.path_params['name']}", status_code=303)
