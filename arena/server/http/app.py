"""The contest server as an ASGI app: :func:`create_app` (what ``arena serve`` runs under uvicorn,
and what tests call). Routes are thin over :mod:`arena.server.store.database`,
:mod:`arena.server.contest.checks` and :mod:`arena.server.ladder.matchmaker`; the background work
(checks, ladder games, the tables' games) runs in worker processes the app's lifespan starts and
stops (:class:`arena.server.workers.supervisor.Supervisor`).

Every refusal is a 4xx: a bad route, method, token, form, size or rate; an unexpected error is a
500 without a traceback (a bug to report). A person's browser gets it as a page in the site's
layout saying what to do next, ``/api/`` and scripts as JSON ``{"error": "..."}``
(:mod:`arena.server.routes.errors`).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.routing import Route, WebSocketRoute

from ..contest.final import ROUNDS, home
from ..ladder.board import Board
from ..routes import api, authors, console, desk, errors, pages
from ..routes import tables as tablepages
from ..store import database as store
from ..store import events
from ..store.migrate import add_indexes
from ..tables.hub import Hub
from ..workers.supervisor import Supervisor
from .auth import Failures, SignOut
from .request import HEADERS
from .settings import ServerSettings
from .sockets import PersonSockets


def routes(settings: ServerSettings) -> list[Any]:
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    class Published(StaticFiles):
        """The final's site once written; before that, a 404 like any missing page."""

        async def check_config(self) -> None:
            if not os.path.isdir(str(self.directory)):
                self.config_checked = False
                raise HTTPException(404, "nothing is published yet")
            await super().check_config()

    sites = [
        Mount(f"/final/{n}", Published(directory=home(settings.folder, n) / "site", html=True, check_dir=False))
        for n in ROUNDS
    ]
    return [
        Route("/final", pages.finals_redirect),
        Route("/final/", pages.finals_page),
        *sites,
        Route("/", pages.leaderboard_page),
        Route("/api/leaderboard", api.get_leaderboard),
        Route("/api/submissions", api.post_submission, methods=["POST"]),
        Route("/api/submissions/{id}", api.get_submission),
        Route("/api/bots/{name}/active", api.post_active, methods=["POST"]),
        Route("/api/register", api.post_register, methods=["POST"]),
        WebSocketRoute("/ws/leaderboard", pages.live_leaderboard),
        Route("/api/mine", authors.get_mine),
        Route("/api/bots/{name}/games", authors.get_bot_games),
        Route("/api/games/{key}/output", authors.get_game_output),
        Route("/mine", authors.mine_page),
        Route("/games/{key}/output", authors.game_output_page),
        Route("/submissions/{id}/games/{game}", authors.check_game_page),
        Route("/bots/{name}", pages.bot_page),
        Route("/bots/{name}/active", pages.active_form, methods=["POST"]),
        Route("/games/{key}", pages.game_page),
        Route("/login", pages.login_page),
        Route("/login", pages.login, methods=["POST"]),
        Route("/logout", pages.logout, methods=["POST"]),
        Route("/register", pages.register_form, methods=["POST"]),
        Route("/upload", pages.upload_page),
        Route("/upload", pages.upload_form, methods=["POST"]),
        Route("/submissions/{id}", pages.submission_page),
        Route("/desk", desk.desk_page),
        Route("/desk/freeze", desk.freeze_form, methods=["POST"]),
        Route("/desk/final", desk.final_form, methods=["POST"]),
        Route("/desk/house", desk.house_form, methods=["POST"]),
        *console.routes(),
        *tablepages.routes(),
        Route("/desk/{id}", desk.review_page),
        Route("/desk/{id}/review", desk.review_form, methods=["POST"]),
    ]


def create_app(settings: ServerSettings) -> Starlette:
    """The server for the contest folder ``settings.folder``.

    :raises store.ContestError: no contest database there.
    """
    db = store.open_db(settings.folder)
    try:
        secret, name = store.setting(db, "session_key"), store.setting(db, "name")
        add_indexes(db)
        if settings.disk_budget is not None and settings.workers:
            give_back(db, settings.folder)
    finally:
        db.close()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        supervisor = None
        if settings.workers:
            supervisor = Supervisor(
                settings.folder,
                settings.check_workers,
                settings.ladder_workers,
                settings.check_games,
                settings.backend,
                settings.ray_address,
                settings.build_workers,
                tables=app.state.tables.attach,
                pace=settings.pace,
                ladder_cpu=settings.ladder_cpu,
                keep_games=settings.keep_games,
                disk_budget=settings.disk_budget,
            )
            supervisor.start()
        app.state.supervisor = supervisor
        watcher = asyncio.ensure_future(app.state.sockets.watch(settings.folder))
        try:
            yield
        finally:
            watcher.cancel()
            stop_finals(app.state.finals)
            app.state.tables.close_all()
            app.state.board.close()
            if supervisor is not None:
                supervisor.stop()

    app = Starlette(
        routes=routes(settings),
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(
                SessionMiddleware,
                secret_key=secret,
                session_cookie="arena_session",
                same_site="strict",
                https_only=settings.secure_cookies,
                max_age=14 * 24 * 3600,
            ),
            Middleware(SignOut, folder=settings.folder),
        ],
        exception_handlers={HTTPException: errors.http_error, Exception: errors.internal_error},
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.contest = name
    app.state.failures = Failures()
    app.state.uploads = Failures(settings.uploads_per_address, "uploads")
    app.state.registrations = Failures(settings.registrations_per_address, "registrations", window=24 * 3600)
    app.state.live = 0
    app.state.secret = secret
    app.state.sockets = PersonSockets()  # sockets acting for a person: closed when they sign out
    app.state.tables = Hub(
        Path(settings.folder), move_seconds=settings.table_move_seconds, per_address=settings.tables_per_address
    )
    app.state.tables.load()  # the tables a restart left open: their games resume in the tables worker
    app.state.board = Board(settings.folder)
    app.state.live_by = {}  # live leaderboard sockets per client address
    app.state.finals = []  # the finals the desk started (stopped with the server: they resume when run again)
    return app


def stop_finals(procs: list[Any], grace: float = 30.0) -> None:
    """SIGTERM each final the desk started that still runs (it stores what finished and is marked
    interrupted), then wait for it (SIGKILL past ``grace`` seconds): no process outlives the server."""
    import subprocess

    running = [p for p in procs if p.poll() is None]
    for proc in running:
        proc.terminate()
    for proc in running:
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def give_back(db: sqlite3.Connection, folder: Path) -> None:
    """With a disk budget: a database made without incremental vacuum is converted once, so that
    retention can give pages back to the disk (:func:`arena.server.ladder.retention.convert`)."""
    import time

    from ..ladder.retention import convert, database_bytes, human

    before, began = sum(database_bytes(folder).values()), time.monotonic()
    try:
        if convert(db):
            after = sum(database_bytes(folder).values())
            events.say(
                db,
                f"contest.db converted to incremental vacuum, once ({human(before)} -> {human(after)} "
                f"in {time.monotonic() - began:.1f} s)",
            )
    except sqlite3.Error as exc:
        events.say(db, f"contest.db could not be converted to incremental vacuum ({exc}): it cannot shrink", "warning")


class SecurityHeaders:
    """Adds :data:`HEADERS` to every HTTP answer."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items() if k.lower().encode() not in have]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, sending)
