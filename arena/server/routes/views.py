"""Stored rows as the pages and the API show them: an upload's bot name, a submission as its author
sees it, a check report in the shape the templates read (whatever the database holds), a game
row's seating. A damaged or edited database is hostile input: a page shows what it can, never a 500."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException

from ...authoring.check import NAME_PATTERN, RESERVED_NAMES
from ...trust.botsource import describe
from ...trust.numbers import whole_number
from ..store import versions


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
