"""The routes of the tables people play (:mod:`.tables`): the tables page and its forms, the JSON
API, a person's seat over a websocket, a finished game in the viewer, and guest links.

A person is whoever the signed session says: an author, the organiser, or a guest who opened
a guest link (signed with the contest's secret, with its end time inside the signature). A
person's websocket is refused before it opens (a JSON 4xx) unless the session is seated at
the table, and, when the browser names its page's origin, unless that is this server.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sqlite3
import time
from collections import deque
from typing import Any, TypeVar
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from ...authoring.check import NAME_PATTERN
from ...errors import BotLoadError
from ...game.rules import Rules
from ...game.visibility import PUBLIC, game_seen_by
from ...trust.numbers import whole_number
from ...trust.text import escape
from ...web.render import render
from ...web.seat import BadAction
from ...web.view import render_viewer, viewer_game
from ..contest import rounds
from ..contest.building import NotReady, playable
from ..http.auth import bearer, check_csrf, client_of, session_guest, session_who, signed, token_owner
from ..http.request import SMALL_BODY, db_call, read_body
from ..http.sockets import SIGNED_OUT
from ..store import database as store
from ..store import table_games as tablestore
from ..tables.hub import (
    MAX_MESSAGE,
    MAX_MESSAGES,
    RATE_WINDOW,
    BotSeat,
    Hub,
    NetworkTable,
    Person,
    PersonSlot,
    TableError,
)
from .pages import page, signed_in

T = TypeVar("T")

#: Hours a guest link lives by default, and at most.
GUEST_HOURS, MAX_GUEST_HOURS = 24, 24 * 14
#: The play page's policy: its own inlined script and style, its websocket, nothing else.
PLAY_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
    "img-src 'self' data:; form-action 'self'"
)


def guest_link(secret: str, name: str, hours: float = GUEST_HOURS) -> str:
    """The path of a new guest link (``/guest/TOKEN``) for ``name``, valid ``hours`` hours."""
    from itsdangerous import URLSafeSerializer

    signer = URLSafeSerializer(secret, salt="arena-guest")
    token = signer.dumps({"n": name, "g": secrets.token_hex(8), "e": int(time.time() + hours * 3600)})
    return f"/guest/{token}"


def read_guest(secret: str, token: str) -> tuple[str, str, int] | None:
    """``(guest id, name, end time)`` of a guest link's token; None when forged, altered or expired."""
    from itsdangerous import BadSignature, URLSafeSerializer

    try:
        data = URLSafeSerializer(secret, salt="arena-guest").loads(token[:600])
    except (BadSignature, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    gid, name, end = data.get("g"), data.get("n"), data.get("e")
    if not (isinstance(gid, str) and isinstance(name, str) and isinstance(end, int)) or end < time.time():
        return None
    return gid, name, end


async def person_of(conn: HTTPConnection, token: bool = False) -> tuple[Person, str] | None:
    """Who is asking, and the name their seat shows: the session's author or organiser, its guest,
    or (``token``: the JSON API) a bearer token's."""
    me = session_who(conn)
    if me is None and token and isinstance(conn, Request) and (given := bearer(conn)):
        me = await token_owner(conn, given)  # counted as every sign-in is (429 past the limit)
    if me is not None:
        if me[0] == "organiser":
            return me, "organiser"
        return me, await db_call(conn, store.author_name, me[1])
    guest = session_guest(conn)
    return (("guest", guest[1]), f"guest-{guest[2]}") if guest else None


def hub_of(conn: HTTPConnection) -> Hub:
    hub: Hub = conn.app.state.tables
    return hub


async def hub_call(conn: HTTPConnection, fn: Any, *args: Any) -> Any:
    """A call of the Hub off the event loop (it may write the table to the database); a
    :class:`TableError` as its HTTP refusal."""
    try:
        return await run_in_threadpool(fn, *args)
    except TableError as exc:
        raise HTTPException(exc.status, str(exc)) from None


async def table_of(conn: HTTPConnection) -> NetworkTable:
    table: NetworkTable = await hub_call(conn, hub_of(conn).get, conn.path_params["id"])
    return table


def choose_bots(db: sqlite3.Connection, names: list[str]) -> tuple[list[BotSeat], Rules]:
    """The current round's ladder versions of the bots ``names``, and the round's rules.

    :raises TableError: not one of them.
    """
    rnd, rows = rounds.entrants(db)
    active = {r["bot"]: r for r in rows}
    chosen = []
    for name in names:
        row = active.get(name)
        if row is None:
            raise TableError(400, f"{escape(name, 60)!r} is not a bot on the ladder")
        try:  # a program's build comes from the cache, never made for a table: one not built yet waits
            playable(db, int(row["id"]), str(row["bot"]), store.source_bytes(row["source"]))
        except NotReady:
            raise TableError(409, f"{escape(name, 60)!r} is being built; choose it again in a minute") from None
        except BotLoadError:
            pass  # not a bot: it plays as the crash it is
        chosen.append(BotSeat(int(row["id"]), str(row["bot"]), int(row["version"])))
    return chosen, rnd.rules


async def open_table(
    conn: Request, person: tuple[Person, str], people: int | None, bots: Any, limit: int | None
) -> str:
    """Open a table; ``people`` and ``limit`` as the request's one parser read them (None: not a number)."""
    if people is None or limit is None:
        raise HTTPException(400, "people and limit are whole numbers")
    if not isinstance(bots, list) or len(bots) > 6 or not all(isinstance(b, str) and len(b) <= 40 for b in bots):
        raise HTTPException(400, "bots is a list of at most 6 bot names")
    try:
        seats, rules = await db_call(conn, choose_bots, bots)
    except TableError as exc:
        raise HTTPException(exc.status, str(exc)) from None
    hub = hub_of(conn)
    table: NetworkTable = await hub_call(
        conn, hub.open, person[0], person[1], people, seats, limit, rules, client_of(conn)
    )
    return table.id


def same_origin(conn: HTTPConnection) -> bool:
    """Whether a browser's request comes from this server's own pages (no Origin: not a browser's)."""
    origin = conn.headers.get("origin")
    return origin is None or urlsplit(origin).netloc == conn.headers.get("host", "")


# -- the JSON API --------------------------------------------------------------------------


async def api_tables(request: Request) -> JSONResponse:
    return JSONResponse({"tables": await hub_call(request, hub_of(request).listing)})


async def api_table(request: Request) -> JSONResponse:
    """One table, open or ended: its summary while the server holds it; then, once its game is
    recorded, ``{"id", "state": "over", "outcome", "record"}``; 404 for a table nobody knows. (A
    seat's page asks this when its websocket is refused: it tells a table gone from a server gone.)"""
    key = request.path_params["id"]
    try:
        table = await run_in_threadpool(hub_of(request).get, key)
    except TableError:
        ended = await db_call(request, tablestore.outcome, key)
        if ended is None:
            raise HTTPException(404, "no such table") from None
        return JSONResponse({"id": key, "state": "over", "outcome": ended, "record": f"/tables/{key}/game"})
    return JSONResponse(table.summary())


async def api_open(request: Request) -> JSONResponse:
    """``{"people": N, "bots": [NAME...], "limit": L}`` -> ``{"id", "url"}`` (201)."""
    me = await json_person(request)
    data = await json_body(request)
    people, limit = (whole_number(data.get(k, d), high=10**6, given="json") for k, d in (("people", 1), ("limit", 125)))
    key = await open_table(request, me, people, data.get("bots", []), limit)
    return JSONResponse({"id": key, "url": f"/tables/{key}", "socket": f"/ws/tables/{key}"}, status_code=201)


async def api_join(request: Request) -> JSONResponse:
    me = await json_person(request)
    await json_body(request)
    table = await hub_call(request, hub_of(request).join, request.path_params["id"], me[0], me[1], client_of(request))
    return JSONResponse({"id": table.id, "url": f"/tables/{table.id}", "socket": f"/ws/tables/{table.id}"})


async def json_person(request: Request) -> tuple[Person, str]:
    me = await person_of(request, token=True)
    if me is None:
        raise HTTPException(401, "sign in, open a guest link, or send Authorization: Bearer TOKEN")
    if not same_origin(request):
        raise HTTPException(403, "a request from another site")
    return me


async def json_body(request: Request) -> dict[str, Any]:
    if not request.headers.get("content-type", "").startswith("application/json"):
        raise HTTPException(415, "send JSON (Content-Type: application/json)")  # a form cannot: no cross-site post
    body = await read_body(request, SMALL_BODY)
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise HTTPException(400, "send a JSON object")
    return data


# -- pages ---------------------------------------------------------------------------------


async def tables_page(request: Request) -> HTMLResponse:
    me = await person_of(request)
    bots = await db_call(request, lambda db: [r["bot"] for r in rounds.entrants(db)[1]])
    recent = await db_call(request, tablestore.recent)
    tables = await hub_call(request, hub_of(request).listing)
    return page(request, "server_tables.html.j2", person=me[1] if me else None, tables=tables, bots=bots, recent=recent)


async def fields_of(request: Request) -> list[tuple[str, str]]:
    await read_body(request, SMALL_BODY)
    form = await request.form(max_files=0, max_fields=16)
    fields = [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
    check_csrf(request, dict(fields).get("csrf"))
    return fields


async def open_form(request: Request) -> Response:
    me = await person_of(request)
    if me is None:
        raise HTTPException(401, "sign in or open a guest link first")
    fields = await fields_of(request)
    one = dict(fields)
    people, limit = (
        whole_number(one.get(k, d), high=10**6, given="text") for k, d in (("people", "1"), ("limit", "125"))
    )
    bots = [v for k, v in fields if k == "bot" and v]
    key = await open_table(request, me, people, bots, limit)
    return RedirectResponse(f"/tables/{key}", status_code=303)


async def join_form(request: Request) -> Response:
    me = await person_of(request)
    if me is None:
        raise HTTPException(401, "sign in or open a guest link first")
    await fields_of(request)
    table = await hub_call(request, hub_of(request).join, request.path_params["id"], me[0], me[1], client_of(request))
    return RedirectResponse(f"/tables/{table.id}", status_code=303)


async def table_page(request: Request) -> HTMLResponse:
    """A seated person's seat (the browser seat's page over a websocket); else the table's join page."""
    me = await person_of(request)
    if me is None:
        raise HTTPException(401, "sign in or open a guest link first (/login)")
    table = await table_of(request)
    if table.seat_of(me[0]) is None:
        return page(request, "server_table.html.j2", table=table.summary())
    contest = request.app.state.contest
    html = render("play.html.j2", token="", socket=f"/ws/tables/{table.id}", heading=contest, back="/tables")
    return HTMLResponse(html, headers={"Cache-Control": "no-store", "Content-Security-Policy": PLAY_CSP})


def table_game(db: sqlite3.Connection, key: str, me: Person | None) -> dict[str, Any] | None:
    """A finished table game as R10 lets ``me`` see it: the organiser all of it, a person who sat
    there (or the author of a bot that did) that seat's view, anyone else the public view."""
    found = tablestore.game(db, key)
    if found is None or not found[1]:
        return None
    seats, events = found
    if me is not None and me[0] == "organiser":
        return viewer_game(events)
    for s, spec in enumerate(seats):
        if me is None:
            break
        if spec.get("kind") == "person" and spec.get("who") == list(me):
            return viewer_game(events, seat=s)
        if spec.get("kind") == "bot" and me[0] == "author":
            owner = db.execute("SELECT author FROM submissions WHERE id = ?", (spec.get("submission"),)).fetchone()
            if owner is not None and int(owner[0]) == me[1]:
                return viewer_game(events, seat=s)
    return viewer_game(game_seen_by(events, PUBLIC))


async def table_game_page(request: Request) -> HTMLResponse:
    me = await person_of(request)
    game = await db_call(request, table_game, request.path_params["id"], me[0] if me else None)
    if game is None:
        raise HTTPException(404, "no such finished table game")
    html = render_viewer(
        [game], title=f"Table game {game['id']}", back=("/tables", "Tables"), heading=request.app.state.contest
    )
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


async def guest_page(request: Request) -> Response:
    """A guest link: the session becomes the guest's (until the link's end), then the tables page."""
    secret, token = request.app.state.secret, request.path_params["token"]
    found = await signed(request, lambda: read_guest(secret, token))  # a forged link is a failed sign-in
    if found is None:
        raise HTTPException(403, "this guest link is not valid (altered, or past its end)")
    if session_who(request) is None:  # a signed-in author or organiser stays who they are
        request.session["guest"] = list(found)
    return RedirectResponse("/tables", status_code=303)


async def guest_form(request: Request) -> HTMLResponse:
    """The desk's button: a new guest link, shown to the organiser."""
    signed_in(request, "organiser")
    fields = dict(await fields_of(request))
    name = fields.get("name") or f"g{secrets.token_hex(2)}"
    if not NAME_PATTERN.fullmatch(name):
        raise HTTPException(400, "a guest name is letters, digits, - or _, from a letter, at most 40")
    link = str(request.base_url).rstrip("/") + guest_link(request.app.state.secret, name)
    return page(request, "server_guest.html.j2", name=name, link=link, hours=GUEST_HOURS)


# -- a person's seat over a websocket ----------------------------------------------------------------


#: What writing to a socket whose client went away raises (Starlette raises WebSocketDisconnect from
#: a send once the client is gone, RuntimeError once the socket is closed): the client left, nothing
#: to report (before, each closed table page logged a 50-line WebSocketDisconnect traceback).
GONE = (WebSocketDisconnect, RuntimeError, OSError)


async def deny(ws: WebSocket, status: int, message: str) -> None:
    try:
        await ws.send_denial_response(JSONResponse({"error": message}, status_code=status))
    except RuntimeError:  # a server without the denial extension: a plain refusal
        try:
            await ws.close(code=1008)
        except GONE:
            pass
    except (WebSocketDisconnect, OSError):  # the client went away first
        pass


async def table_socket(ws: WebSocket) -> None:
    """Sends the seat's state whenever it changes (and refusals as ``{"error": ...}``); receives
    actions, ``{"action": "put", "card": "9h", "suit": null}`` (or draw, finish, leave), passed to
    the tables worker."""
    if not same_origin(ws):
        return await deny(ws, 403, "a websocket from another site")
    me = await person_of(ws)
    if me is None:
        return await deny(ws, 401, "sign in or open a guest link first")
    try:
        table = await run_in_threadpool(hub_of(ws).get, ws.path_params["id"])
    except TableError as exc:
        return await deny(ws, exc.status, str(exc))
    seat = table.seat_of(me[0])
    if seat is None:
        return await deny(ws, 403, "you have no seat at this table: join it first")
    try:
        await ws.accept()
    except GONE:  # the client left before its socket opened
        return None
    seat.connection += 1  # a newer page of the same person takes the seat over: the older ones stop now
    for _, older, _ in list(seat.watchers.values()):
        older.set()
    mine, changed = seat.connection, asyncio.Event()
    errors: list[str] = []
    seat.watchers[mine] = (asyncio.get_running_loop(), changed, errors)
    ended = asyncio.Event()  # set when the person signs out or is disabled (http.sockets)
    registered = ws.app.state.sockets.add(me[0], ws.session.get("at"), ended.set)
    tasks = [
        asyncio.ensure_future(reader(ws, hub_of(ws), table, seat, errors, changed)),
        asyncio.ensure_future(writer(ws, seat, mine, errors, changed)),
        asyncio.ensure_future(ended.wait()),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()
        ws.app.state.sockets.remove(registered)
        seat.watchers.pop(mine, None)
        code = SIGNED_OUT if ended.is_set() else 4001 if seat.connection != mine else 1000
        try:
            await ws.close(code=code)
        except GONE:
            pass
    return None


async def reader(
    ws: WebSocket, hub: Hub, table: NetworkTable, seat: PersonSlot, errors: list[str], changed: asyncio.Event
) -> None:
    recent: deque[float] = deque()
    try:
        while True:
            message = await ws.receive()
            if message.get("type") == "websocket.disconnect":
                return
            now = time.monotonic()
            recent.append(now)
            while recent[0] < now - RATE_WINDOW:
                recent.popleft()
            if len(recent) > MAX_MESSAGES:
                return  # a flood: the connection ends (the page may come back)
            text = message.get("text")
            try:
                if not isinstance(text, str) or len(text.encode("utf-8", "replace")) > MAX_MESSAGE:
                    raise BadAction(f"an action is one JSON text message of at most {MAX_MESSAGE} bytes")
                await run_in_threadpool(hub.act, table, seat, json.loads(text))
            except (ValueError, RecursionError, BadAction) as exc:
                errors.append(escape(str(exc), 300) or "not an action")
                del errors[:-5]
                changed.set()
    except GONE:
        return


async def writer(ws: WebSocket, seat: PersonSlot, mine: int, errors: list[str], changed: asyncio.Event) -> None:
    last = -1
    try:
        while seat.connection == mine:
            version, text = seat.snapshot_text()
            if version != last:
                last = version
                await ws.send_text(text)
            while errors:
                await ws.send_text(json.dumps({"error": errors.pop(0)}))
            await changed.wait()
            changed.clear()
    except GONE:
        return


def routes() -> list[Any]:
    return [
        Route("/tables", tables_page),
        Route("/tables", open_form, methods=["POST"]),
        Route("/api/tables", api_tables),
        Route("/api/tables", api_open, methods=["POST"]),
        Route("/api/tables/{id}", api_table),
        Route("/api/tables/{id}/join", api_join, methods=["POST"]),
        Route("/tables/{id}", table_page),
        Route("/tables/{id}/join", join_form, methods=["POST"]),
        Route("/tables/{id}/game", table_game_page),
        WebSocketRoute("/ws/tables/{id}", table_socket),
        Route("/guest/{token}", guest_page),
        Route("/desk/guest", guest_form, methods=["POST"]),
    ]
