"""The server's health, as the organiser's console shows it (docs/server.md, "Running for a week"):
the check queue, the workers (alive, since when, restarts), the ladder (playing, paused or stopped at
its disk budget; games a minute and an hour), how long checks take, the disk the contest folder
uses against its budget, and the errors and events of the last hour (:mod:`..store.events`).

Everything is read from the contest database and the folder, but the workers, which only the
server's supervisor knows (:class:`.supervisor.Supervisor`)."""

from __future__ import annotations

import json
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

from ..ladder import pace, retention
from ..store import database as store
from ..store import events
from .supervisor import Supervisor

#: The window of "the last hour".
HOUR = 3600.0


def workers(supervisor: Supervisor | None) -> list[dict[str, Any]]:
    """Each worker slot: its kind, process id, whether it runs, since when, and its restarts."""
    if supervisor is None:
        return []
    found = []
    for slot, proc in sorted(supervisor.procs.items()):
        found.append(
            {
                "kind": slot[0],
                "slot": slot[1],
                "pid": proc.pid,
                "alive": proc.poll() is None,
                "since": supervisor.started.get(slot),
                "restarts": supervisor.restarted.get(slot, 0),
            }
        )
    return found


def ladder_state(db: sqlite3.Connection) -> dict[str, Any]:
    """What the ladder said it does (:data:`..ladder.pace.STATE`), and whether it is paused."""
    try:
        said = json.loads(store.setting(db, pace.STATE) or "{}")
    except ValueError:
        said = {}
    said = said if isinstance(said, dict) else {}
    return {
        "paused": pace.paused(db),
        "state": str(said.get("state", "")),
        "text": str(said.get("text", "")),
        "since": said.get("since") if isinstance(said.get("since"), int | float) else None,
    }


def check_times(db: sqlite3.Connection, since: float) -> dict[str, Any]:
    """The checks that ended since ``since``: how many, and the median and longest time from
    upload to verdict (waiting in the queue included)."""
    took = [
        float(r[0])
        for r in db.execute(
            "SELECT CAST(checked AS REAL) - CAST(created AS REAL) FROM submissions WHERE checked >= ? LIMIT 10000",
            (since,),
        )
        if r[0] is not None
    ]
    return {
        "count": len(took),
        "median": statistics.median(took) if took else None,
        "longest": max(took) if took else None,
    }


def disk(db: sqlite3.Connection, folder: Path, budget: int | None) -> dict[str, Any]:
    files = retention.database_bytes(folder)
    free = int(db.execute("PRAGMA freelist_count").fetchone()[0]) * int(db.execute("PRAGMA page_size").fetchone()[0])
    used = retention.folder_bytes(folder)
    return {
        "folder": used,
        "database": files["db"],
        "wal": files["wal"],
        "free_inside": free,
        "budget": budget,
        "share": used / budget if budget else None,
        **retention.counts(db),
    }


def health(db: sqlite3.Connection, folder: Path, settings: Any, supervisor: Supervisor | None) -> dict[str, Any]:
    """The console's view of the server, now (``settings``: the server's
    :class:`arena.server.http.settings.ServerSettings`)."""
    now = time.time()
    hour = now - HOUR
    queued = {str(k): int(n) for k, n in db.execute("SELECT status, COUNT(*) FROM submissions GROUP BY status")}
    games_minute = int(db.execute("SELECT COUNT(*) FROM games WHERE finished >= ?", (now - 60,)).fetchone()[0])
    games_hour = int(db.execute("SELECT COUNT(*) FROM games WHERE finished >= ?", (hour,)).fetchone()[0])
    the_pace = pace.Pace(settings.pace, settings.ladder_cpu)
    return {
        "at": now,
        "queue": {"waiting": queued.get("queued", 0), "checking": queued.get("checking", 0)},
        "workers": workers(supervisor),
        "ladder": {
            **ladder_state(db),
            "pace": pace.describe(the_pace),
            "keep": settings.keep_games,
            "games_minute": games_minute,
            "games_hour": games_hour,
            "workers": settings.ladder_workers,
        },
        "checks": check_times(db, hour),
        "disk": disk(db, folder, settings.disk_budget),
        "errors": events.count(db, hour, "error"),
        "warnings": events.count(db, hour, "warning"),
        "events": events.recent(db, hour, 30),
    }


def ago(seconds: float) -> str:
    """A duration in words: 12 s, 5 min, 3 h, 2 d."""
    seconds = max(0.0, seconds)
    for limit, unit in ((120, "s"), (7200, "min"), (172800, "h")):
        if seconds < limit:
            return f"{seconds / {'s': 1, 'min': 60, 'h': 3600}[unit]:.0f} {unit}"
    return f"{seconds / 86400:.0f} d"


def human(size: float | None) -> str:
    return "-" if size is None else retention.human(size)
