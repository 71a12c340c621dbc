"""What every route shares: the server's settings, database access off the event loop, bounded
request bodies, and the upload's bot name."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request

from ...authoring.check import NAME_PATTERN, RESERVED_NAMES
from ...trust.botsource import MAX_SOURCE_BYTES, describe
from ...trust.numbers import whole_number
from ..store import database as store
from ..store import versions

T = TypeVar("T")

#: Security headers of every answer.
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
#: Bytes a multipart upload may add around the file (boundaries, headers, the CSRF field).
FORM_OVERHEAD = 16 * 1024
#: Largest body of any other request (sign-in, review forms, JSON).
SMALL_BODY = 64 * 1024


@dataclass(frozen=True)
class ServerSettings:
    """How ``arena serve`` runs a contest folder."""

    folder: Path
    max_upload: int = MAX_SOURCE_BYTES
    uploads_per_minute: int = 10
    #: Uploads one client address may make a minute, whoever signs them (many authors behind one address).
    uploads_per_address: int = 60
    open_registration: bool = False
    check_workers: int = 1
    #: Processes running bot programs' builds (one build each; one author's at a time).
    build_workers: int = 2
    ladder_workers: int = 1
    check_games: int = 2
    #: Where the ladder's and the final's games run: "local" processes or "ray" (``--backend``).
    backend: str = "local"
    #: With backend "ray": the cluster to join (``--ray-address``); None starts a local Ray.
    ray_address: str | None = None
    #: Session cookies only over HTTPS (TLS, or behind a TLS reverse proxy).
    secure_cookies: bool = False
    #: Seconds between the live leaderboard's looks at the database.
    live_seconds: float = 0.5
    #: Live leaderboard connections at once; more are closed at once (1013, try again later).
    max_live: int = 500
    #: Live leaderboard connections from one client address at once (one client cannot take them all).
    max_live_per_address: int = 20
    #: Open tables (waiting or playing) in which one client address holds a seat, whoever signed in.
    tables_per_address: int = 4
    #: A person's seconds for one move at a table (``--table-move-seconds``).
    table_move_seconds: float = 120.0
    #: Authors one client address may register in a day (with ``open_registration``).
    registrations_per_address: int = 5
    #: Start the background workers with the app (tests of the routes alone set False).
    workers: bool = True
    #: The ladder's pace: games per bot an hour at most (0: none), the share of the time each ladder
    #: worker may be busy, each version's latest games kept whole, and the contest folder's disk
    #: budget in bytes (None: none): docs/server.md, "Running for a week".
    pace: float = 120.0
    ladder_cpu: float = 1.0
    keep_games: int = 100
    disk_budget: int | None = None


#: A q-value of an Accept header (RFC 9110: 0 to 1, three decimals at most); anything else counts as 0.
_QVALUE = re.compile(r"0(\.[0-9]{0,3})?|1(\.0{0,3})?")
#: What a browser names when it opens a page.
_HTML = ("text/html", "application/xhtml+xml")


def wants_html(conn: HTTPConnection) -> bool:
    """Whether a refusal goes to a person as a page: an HTTP request outside ``/api/`` whose Accept
    header names HTML (what a browser sends when it opens a page) at least as high as JSON. A
    script's ``*/*`` (curl, urllib, ``fetch``) or ``application/json``, and every ``/api/`` route,
    get JSON."""
    if conn.scope.get("type") != "http" or conn.url.path.startswith("/api/"):
        return False
    html = json_q = 0.0
    for part in conn.headers.get("accept", "")[:4096].split(",")[:64]:
        kind, *params = (p.strip().lower() for p in part.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                q = float(value.strip()) if _QVALUE.fullmatch(value.strip()) else 0.0
        if kind in _HTML:
            html = max(html, q)
        elif kind == "application/json":
            json_q = max(json_q, q)
    return html > 0 and html >= json_q


def json_object(body: bytes) -> dict[str, Any]:
    """A request's JSON object; {} for anything else (not JSON, not UTF-8, nested past the parser's depth)."""
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


async def db_call(conn: HTTPConnection, fn: Callable[..., T], *args: Any) -> T:
    """``fn(db, *args)`` on a connection of its own, in a worker thread (never blocking the loop);
    ``conn`` is a request or a websocket."""
    folder: Path = conn.app.state.settings.folder

    def call() -> T:
        db = store.open_db(folder)
        try:
            return fn(db, *args)
        finally:
            db.close()

    return await run_in_threadpool(call)


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused with 413 past ``limit`` bytes (declared or sent)."""
    declared = whole_number(request.headers.get("content-length", ""), given="text")
    if declared is not None and declared > limit:
        raise HTTPException(413, f"the request is larger than {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"the request is larger than {limit} bytes")
        chunks.append(chunk)
    body = b"".join(chunks)
    request._body = body  # the form parser reads these bytes, never the stream again
    return body


def bot_name(source: bytes, filename: str | None) -> str:
    """The name an upload is stored under: its ``Bot.name``, else its file name's stem.

    :raises HTTPException: 400, no usable name.
    """
    from ..contest.uploads import declared_name, is_bundle

    declared = declared_name(source) if is_bundle(source) else describe(source.decode("utf-8", "replace"))[0]
    name = declared or (Path(filename).stem if filename else "")
    if not NAME_PATTERN.fullmatch(name) or name.lower() in RESERVED_NAMES:
        raise HTTPException(
            400,
            f"bot name {name[:60]!r} cannot name a submission: set Bot.name to letters, digits, - or _ "
            "(starting with a letter, at most 40)",
        )
    return name


def submission_view(row: sqlite3.Row, active: bool) -> dict[str, Any]:
    """A submission as its author (and the organiser) sees it."""
    try:
        report = report_view(json.loads(row["report"])) if row["report"] else None
    except (ValueError, RecursionError):
        report = None
    return {
        "id": row["id"],
        "bot": row["bot"],
        "version": row["version"],
        "label": versions.label(row["version"]),
        "sha256": row["sha256"],
        "status": row["shown"] if "shown" in row.keys() else row["status"],  # 'building' while it is
        "error": row["error"],
        "review": row["review"],
        "comment": row["comment"],
        "active": active,
        "report": report,
    }


#: The rows of a check report the pages show, and each row's fields.
REPORT_ROWS = {
    "problems": ("path", "line", "column", "message"),
    "faults": ("kind", "game", "round", "detail", "seat", "players"),
    "tables": ("players", "games", "places", "faults", "opponents"),
}


def report_view(raw: Any) -> dict[str, Any] | None:
    """A stored check report in the shape the pages read, whatever the database holds: a report
    written when a round was damaged (``{"clean": false}``) or edited by hand lacked the rows the
    templates read (a 500); every row and field is there now, missing ones empty."""
    if not isinstance(raw, dict):
        return None
    view = dict(raw)
    for key, fields in REPORT_ROWS.items():
        given = raw.get(key)
        rows: list[Any] = given if isinstance(given, list) else []
        view[key] = [{**{f: None for f in fields}, **r} for r in rows if isinstance(r, dict)]
    for row in view["tables"]:
        row["places"] = row["places"] if isinstance(row["places"], list) else []
        row["opponents"] = [str(o) for o in row["opponents"]] if isinstance(row["opponents"], list) else []
    view["stopped"] = raw["stopped"] if isinstance(raw.get("stopped"), str) else None
    warnings = raw.get("warnings")
    view["warnings"] = [str(w) for w in warnings] if isinstance(warnings, list) else []
    timing = raw.get("move_time")
    view["move_time"] = (
        {k: timing.get(k) for k in ("moves", "median_ms", "worst_ms", "clock")} if isinstance(timing, dict) else None
    )
    return view


def report_parts(report: dict[str, Any] | None) -> list[dict[str, Any]]:
    """What the pages show of a check report (:func:`report_view`'s) beside it: each smoke table's
    line-ups (``against``, as ``arena check`` prints them), and its faults grouped by kind and
    detail, as ``arena check`` prints them: how many, where the first was and every game they
    were in (retirements are their consequence, not listed)."""
    from ...authoring.check import lineups

    for table in (report or {}).get("tables", []):
        table["against"] = lineups(table)
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for f in (report or {}).get("faults", []):
        if f["kind"] == "retired":
            continue
        key = (str(f["kind"]), str(f["detail"]))
        if key not in groups:
            groups[key] = {"kind": key[0], "detail": key[1], "count": 0, "games": []}
            groups[key].update({k: f[k] for k in ("game", "seat", "round")})
        groups[key]["count"] += 1
        if f["game"] not in groups[key]["games"]:
            groups[key]["games"].append(f["game"])
    return list(groups.values())


def stored_seating(text: Any) -> list[int]:
    """A game row's seating (submission ids, seat by seat); [] for anything else (a damaged or
    edited database is hostile input: a page shows what it can, never a 500)."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return []
    if not isinstance(data, list) or not all(whole_number(s, given="json") is not None for s in data):
        return []
    return data
