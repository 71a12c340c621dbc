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
from urllib.parse import quote, urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from ...game.visibility import PUBLIC, game_seen_by
from ...report.charts import rating_chart
from ...trust.numbers import whole_number
from ...web.render import render
from ...web.view import render_viewer, viewer_game
from ..http.auth import check_csrf, client_of, csrf_token, session_guest, session_who, token_owner
from ..http.request import SMALL_BODY, db_call, read_body, wants_html
from ..store import builds, versions
from ..store import database as store
from ..store.authors import signed_out_key
from . import dashboard
from .api import accept_upload, board_of, choose_active, path_int, register, upload_bytes, visible_submission
from .views import report_parts, stored_seating


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    me = session_who(request)
    guest = session_guest(request) if me is None else None
    html = render(template, me=me, guest=guest, csrf=csrf_token(request), contest=request.app.state.contest, **context)
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


def finals_data(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Each round's final as the index of finals shows it."""
    from ..contest import final
    from ..contest.rounds import current_number

    out = []
    for number in final.ROUNDS:
        if number > current_number(db):
            break
        data = final.state(db, number)
        out.append(
            {
                "round": number,
                "word": final.ORDINAL.get(number, str(number)),
                "state": final.current_state(db, number),
                "entrants": [str(x) for x in data.get("entrants") or [] if isinstance(x, str)],
            }
        )
    return out


async def finals_page(request: Request) -> HTMLResponse:
    """``/final/``: the finals, each linked once published (``/final/1/``, ``/final/2/``)."""
    return page(request, "server_finals.html.j2", finals=await db_call(request, finals_data))


async def finals_redirect(request: Request) -> Response:
    return RedirectResponse("/final/", status_code=307)


async def live_leaderboard(ws: WebSocket) -> None:
    """Sends the leaderboard now and again whenever a game or an upload changes it."""
    state, settings, client = ws.app.state, ws.app.state.settings, client_of(ws)
    mine = state.live_by.get(client, 0)
    if state.live >= settings.max_live or mine >= settings.max_live_per_address:  # bounded, and per address
        try:
            await ws.close(code=1013)
        except (WebSocketDisconnect, RuntimeError, OSError):  # it went away first
            pass
        return
    state.live += 1
    state.live_by[client] = mine + 1
    try:
        await ws.accept()
        await follow(ws)
    except (WebSocketDisconnect, RuntimeError, OSError):  # the client went away: nothing to report
        pass
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


def bot_data(
    db: sqlite3.Connection,
    name: str,
    me: tuple[str, int] | None,
    flt: dashboard.GameFilter = dashboard.ALL_GAMES,
    chart: str | None = None,
) -> dict[str, Any] | None:
    """A bot's page: its versions (their checks and reviews; why a check failed and the organiser's
    comment to its author and the organiser only), one version's rating chart (``chart``: a label,
    ``v2``; else the active one) and a page of its games (:func:`.dashboard.bot_games`)."""
    bot = db.execute(
        "SELECT b.name, b.author, b.active, b.house, a.name AS who FROM bots b JOIN authors a ON a.id = b.author "
        "WHERE b.name = ?",
        (name,),
    ).fetchone()
    if bot is None:
        return None
    own = dashboard.owns(me, bot["author"])
    rows = db.execute(
        f"SELECT s.*, {builds.STATUS} AS shown {builds.JOIN} WHERE s.bot = ? ORDER BY s.version DESC LIMIT ?",
        (name, dashboard.HISTORY),
    ).fetchall()
    ratings = {
        row[0]: (float(row[1] or 0), float(row[2] or 0), row[3])
        for row in db.execute(  # each version's rating in the latest round it was rated in
            "SELECT submission, CAST(mu AS REAL), CAST(sigma AS REAL), CAST(games AS INTEGER) FROM ratings r "
            "WHERE submission IN (SELECT id FROM submissions WHERE bot = ?) AND round = "
            "(SELECT MAX(round) FROM ratings x WHERE x.submission = r.submission)",
            (name,),
        )
    }
    versions_ = [
        {
            "id": r["id"],
            "label": versions.label(r["version"]),
            "uploaded": dashboard.when(r["created"]),
            "status": r["shown"],  # 'building' while its build is
            "review": r["review"],
            "active": r["id"] == bot["active"],
            "rating": ratings.get(r["id"]),
            "error": r["error"] if own else None,
            "comment": r["comment"] if own else "",
        }
        for r in rows
    ]
    games = dashboard.bot_games(db, name, me, flt)
    query = {**flt.query(), **({"chart": chart} if chart else {})}

    def link(number: int) -> str | None:
        inside = 1 <= number <= games["pages"] and number != games["page"]
        return f"/bots/{quote(name)}?{urlencode({**query, 'page': number})}#games" if inside else None

    history = dashboard.rating_history(db, name, chart)
    drawn = None
    if history is not None:  # drawn for a wide screen and for a phone's (a style shows one): no script
        title = f"{name} {history['label']}, round {history['round']}: rating after each game"
        wide, narrow = (
            rating_chart(history["points"], title=title, width=w, height=h) for w, h in ((640, 250), (360, 230))
        )
        drawn = {"wide": wide, "narrow": narrow} if wide is not None else None
    return {
        "name": bot["name"],
        "author": None if bot["house"] else bot["who"],
        "house": bot["house"] is not None,
        "own": own,
        "versions": versions_,
        "history": history,
        "chart": drawn,
        "games": games,
        "links": {"newer": link(games["page"] - 1), "older": link(games["page"] + 1)},
        "filter": flt,
        "opponents": dashboard.opponents(db, name),
        "fault_kinds": dashboard.FAULT_KINDS,
    }


#: Public bot pages' data, kept as the leaderboard is (at most FRESH_SECONDS old): (folder, name) -> (when, data).
PUBLIC_BOTS: OrderedDict[tuple[str, str], tuple[float, dict[str, Any]]] = OrderedDict()


async def bot_page(request: Request) -> HTMLResponse:
    from ..ladder.board import FRESH_SECONDS

    me, name = session_who(request), str(request.path_params["name"])
    flt, chart = dashboard.game_filter(request), request.query_params.get("chart") or None
    plain = flt == dashboard.ALL_GAMES and chart is None  # the page as linked: the one kept for the public
    cached = (str(request.app.state.settings.folder), name) if me is None and plain else None
    kept = PUBLIC_BOTS.get(cached) if cached else None  # only the public view is shared between readers
    if kept is not None and time.monotonic() - kept[0] < FRESH_SECONDS:
        data: dict[str, Any] | None = kept[1]
    else:
        data = await db_call(request, bot_data, name, me, flt, chart)
        if cached and data is not None:
            PUBLIC_BOTS[cached] = (time.monotonic(), data)
            PUBLIC_BOTS.move_to_end(cached)
            while len(PUBLIC_BOTS) > PUBLIC_GAMES_KEPT:
                PUBLIC_BOTS.popitem(last=False)
    if data is None:
        raise HTTPException(404, f"there is no bot called {name[:60]!r}")
    return page(request, "server_bot.html.j2", bot=data)


def game_data(
    db: sqlite3.Connection, key: str, me: tuple[str, int] | None, asked: int | None = None
) -> tuple[dict[str, Any], int | None, list[str]] | None:
    """A game in the viewer, as its reader may see it (R10): (the game, the seat it is seen from, the
    names of the reader's seats). The organiser sees the whole record (from seat ``asked``, if
    given); an author what their bot's seat saw (``asked``, when it is one of theirs, else their
    first: in round two two of their versions may sit at one table); anyone else the public view."""
    row = db.execute("SELECT seating, log FROM games WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    events = store.unpack(row["log"])
    if not events:
        return None
    seating = stored_seating(row["seating"])
    if me is not None and me[0] == "organiser":
        return viewer_game(events), asked if asked is not None and asked < len(seating) else None, []
    if me is not None:
        owners = [db.execute("SELECT author FROM submissions WHERE id = ?", (s,)).fetchone() for s in seating]
        mine = [s for s, o in enumerate(owners) if o is not None and int(o[0]) == me[1]]
        if mine:
            seat = asked if asked in mine else mine[0]
            names = [str(p.get("name")) for p in events[0].get("players", []) if isinstance(p, dict)]
            return viewer_game(events, seat=seat), seat, [names[s] for s in mine if s < len(names)]
    return viewer_game(game_seen_by(events, PUBLIC)), None, []


#: Public game pages kept rendered (a stored game never changes): (contest folder, key) -> HTML.
PUBLIC_GAMES: OrderedDict[tuple[str, str], str] = OrderedDict()
#: How many public game pages are kept (about 50 KB each).
PUBLIC_GAMES_KEPT = 128


async def game_page(request: Request) -> HTMLResponse:
    me = session_who(request)
    cached = (str(request.app.state.settings.folder), str(request.path_params["key"])) if me is None else None
    html = PUBLIC_GAMES.get(cached) if cached else None  # only the public view is shared between readers
    if html is None:
        asked = whole_number(request.query_params.get("seat", ""), 0, 5, given="text")
        found = await db_call(request, game_data, request.path_params["key"], me, asked)
        if found is None:
            from ..ladder.retention import result

            kept = await db_call(request, result, str(request.path_params["key"]))
            if kept is None:
                raise HTTPException(404, f"there is no game {str(request.path_params['key'])[:80]!r}")
            return page(request, "server_result.html.j2", result=kept)  # reduced to its result (ruling 152)
        game, seat, mine = found
        title = f"Game {game['id']}" + (f": {', '.join(mine)}" if mine else "")
        back = ("/mine", "My bots") if mine else ("/", "Leaderboard")
        html = render_viewer([game], title=title, seat=seat, back=back, heading=request.app.state.contest)
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
    try:
        sid = await accept_upload(request, author, data, filename)
    except versions.Identical as same:  # the version it is, which says so
        return RedirectResponse(f"/submissions/{same.submission}?identical=1", status_code=303)
    return RedirectResponse(f"/submissions/{sid}", status_code=303)


async def submission_page(request: Request) -> HTMLResponse:
    role, author = signed_in(request)
    view = await db_call(request, visible_submission, path_int(request, "id"), role, author)
    if view is None:
        raise HTTPException(404, "no such submission of yours")
    identical = request.query_params.get("identical") == "1"
    faults = report_parts(view["report"])
    return page(request, "server_submission.html.j2", sub=view, faults=faults, identical=identical)


async def active_form(request: Request) -> Response:
    role, author = signed_in(request)
    fields = await form_fields(request)
    sid = whole_number(fields.get("submission", ""), given="text")
    if sid is None:
        raise HTTPException(400, "choose a submission")
    await choose_active(request, role, author, request.path_params["name"], sid)
    return RedirectResponse(f"/bots/{request.path_params['name']}", status_code=303)
