"""The round-one final from the desk: the frozen, approved active versions played by the existing
tournament engine (``arena tournament``, sandboxed) and published as its static site (``arena report``).

Everything is written under ``DIR/final/`` (made by this module: the bots' files, the tournament
database, the records and the site). The run is a separate process; if it dies, running it again
resumes the same tournament (its database keeps the schedule and the seed), and the site is
written again. Its state is kept in the contest database (``final``: JSON).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..store import database as store

#: Deals per table of the final (each played once per seat rotation).
FINAL_GAMES = 2


def state(db: sqlite3.Connection) -> dict[str, Any]:
    try:
        data = json.loads(store.setting(db, "final") or "{}")
    except ValueError:
        data = {}
    return data if isinstance(data, dict) else {}


def set_state(db: sqlite3.Connection, **data: Any) -> None:
    store.set_setting(db, "final", json.dumps(data))


def field(db: sqlite3.Connection) -> list[sqlite3.Row]:
    """The final's entrants: each bot's active version, clean and approved."""
    return list(
        db.execute(
            "SELECT s.id, s.bot, s.source FROM bots b JOIN submissions s ON s.id = b.active "
            "WHERE s.status = 'clean' AND s.review = 'approved' ORDER BY s.bot"
        )
    )


def can_start(db: sqlite3.Connection) -> str | None:
    """Why the final cannot start now; None when it can."""
    if store.setting(db, "round") not in ("", "1"):  # round one's final stays as published
        return "round two is open: the round-one final is kept as it was run"
    if store.setting(db, "frozen") != "1":
        return "freeze submissions first: the final plays the frozen versions"
    if state(db).get("state") == "running":
        return "the final is running"
    if len(field(db)) < 2:
        return "the final needs at least two approved active versions"
    return None


def start(folder: Path, settings: Any = None) -> None:
    """Start the final's process (``python -m arena.server.workers.processes final DIR``), on the server's
    backend (:class:`arena.server.http.common.ServerSettings`: ``backend``, ``ladder_workers``)."""
    backend = ["--backend", "ray", "--workers", str(max(1, settings.ladder_workers))] if backend_of(settings) else []
    address = getattr(settings, "ray_address", None)
    if backend and address:
        backend += ["--ray-address", address]
    subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena.server.workers.processes",
            "final",
            str(folder),
            "--parent",
            str(os.getpid()),
            *backend,
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def write_bot(bots: Path, bot: str, data: bytes) -> None:
    """A stored version as the tournament reads it: ``NAME.py``, ``NAME.js`` or a folder ``NAME/``
    (a program's bundle unpacked; the tournament bundles it again into the same bytes)."""
    from ...authoring.submissions import write_atomic
    from .uploads import is_bundle, stored_bot

    files: tuple[tuple[str, bytes], ...] = ((f"{bot}.py", data),)
    if is_bundle(data):
        try:
            src = stored_bot(bot, data)
        except Exception:  # noqa: BLE001 - an unreadable stored bundle plays as the crashed file it is
            src = None
        if src is not None and src.runtime == "node":
            files = ((f"{bot}.js", src.files[0][1]),)
        elif src is not None:
            files = tuple((f"{bot}/{rel}", content) for rel, content in src.files)
    for rel, content in files:
        target = bots / rel
        if not (target.is_file() and not target.is_symlink() and target.read_bytes() == content):
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, content)


def backend_of(settings: Any) -> bool:
    return getattr(settings, "backend", "local") == "ray"


def tournament_backend(backend: str, workers: int, ray_address: str | None = None) -> list[str]:
    """The tournament's options for the server's backend: Ray with the ladder's worker count (on
    the cluster at ``ray_address``, else a local instance), or one local process."""
    if backend != "ray":
        return ["--workers", "1"]
    return ["--backend", "ray", "--workers", str(workers), *(["--ray-address", ray_address] if ray_address else [])]


def run(
    db: sqlite3.Connection,
    folder: Path,
    games: int = FINAL_GAMES,
    backend: str = "local",
    workers: int = 1,
    ray_address: str | None = None,
) -> None:
    """Play and publish the final; its state says how it went (one line when it failed)."""
    entrants = field(db)
    home = folder / "final"
    bots = home / "bots"
    set_state(db, state="running", bots=[r["bot"] for r in entrants])
    try:
        bots.mkdir(parents=True, exist_ok=True)
        for r in entrants:  # the stored, checked bytes; the same files again when resumed
            write_bot(bots, str(r["bot"]), store.source_bytes(r["source"]))
        size = str(min(4, len(entrants)))
        tournament = [
            sys.executable,
            "-m",
            "arena",
            "tournament",
            str(bots),
            "--players",
            size,
            "--games",
            str(games),
            "--db",
            str(home / "final.sqlite"),
            "--replays",
            str(home / "records"),
            "--quiet",
            *tournament_backend(backend, workers, ray_address),
        ]
        report = [
            sys.executable,
            "-m",
            "arena",
            "report",
            "--db",
            str(home / "final.sqlite"),
            "--replays",
            str(home / "records"),
            "--out",
            str(home / "site"),
            "--quiet",
            "--workers",
            "1",
        ]
        for cmd in (tournament, report):
            done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                line = (done.stderr.strip().splitlines() or ["no message"])[-1]
                set_state(db, state="failed", detail=f"{cmd[3]} failed: {line[:300]}")
                return
    except OSError as exc:
        set_state(db, state="failed", detail=f"{home}: {exc.strerror or exc}")
        return
    set_state(db, state="published", bots=[r["bot"] for r in entrants])


def interrupted(db: sqlite3.Connection) -> None:
    """At the server's start: a final left running by a dead process can be run again (it resumes)."""
    if state(db).get("state") == "running":
        set_state(db, state="interrupted", detail="the final's process stopped; run it again to resume")
