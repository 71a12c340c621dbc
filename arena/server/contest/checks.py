"""The check every upload gets: ``arena check`` as a library call (:func:`arena.authoring.check.run_check`),
sandboxed, on exactly the stored bytes; its outcome as a report and, when not clean, one line, with
the records of the smoke games it faulted in (its author replays them). Then the desk's view of the
upload (:mod:`.review`: highlighted, diffed), made once and stored."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from ...authoring.check import CheckSettings, failure_line, run_check
from ...errors import BotLoadError, UsageError
from ...trust.botsource import BotSource
from ...trust.text import escape
from ..store import builds, events
from ..store import database as store
from ..store.outputs import save_check_games
from .building import NotReady, playable
from .uploads import is_bundle, stored_bot


def check_one(
    row: sqlite3.Row, settings: CheckSettings, src: BotSource | None = None
) -> tuple[dict[str, Any], str | None, list[dict[str, Any]]]:
    """Check one stored upload (its bytes, never a file that could change; ``src``: a program as it
    plays, its build taken from the cache): (report, error line, the records of the smoke games it
    faulted in: :attr:`~arena.authoring.check.CheckReport.records`)."""
    data = store.source_bytes(row["source"])
    name = f"{row['bot']}.py"
    try:
        if is_bundle(data):  # a program (a .js file or a bot folder), read back checked
            src = src or stored_bot(str(row["bot"]), data)
            name = f"{row['bot']}.js" if src.runtime == "node" else f"{row['bot']}/"
            checked = run_check(name, settings, src=src)
        else:
            checked = run_check(name, settings, data=data)
    except (UsageError, BotLoadError) as exc:
        return (
            {"clean": False, "problems": [{"path": name, "line": None, "message": str(exc)}]},
            escape(f"the check failed: {exc}", 600),
            [],
        )
    except Exception as exc:  # a bug the upload provoked: the upload fails, the queue goes on
        message = f"the check could not run ({type(exc).__name__}: {exc}); report it to the organiser"
        problems = [{"path": name, "line": None, "message": message}]
        return {"clean": False, "problems": problems}, escape(message, 600), []
    report = checked.to_dict()
    return report, failure_line(report), checked.records


def run_queue(db: sqlite3.Connection, settings: CheckSettings, worker: int) -> bool:
    """Check the oldest queued upload, if any, under the rules of the round it was uploaded in;
    returns whether one was checked."""
    from dataclasses import replace

    from .rounds import get_round, round_of

    builds.decide_missing(db)  # an older database's bot programs: their builds queued first
    row = store.claim_check(db, worker)
    if row is None:
        return False
    try:
        rules = get_round(db, round_of(db, int(row["id"]))).rules
    except store.ContestError as exc:  # a damaged round: the upload fails, the queue goes on
        store.finish_check(db, int(row["id"]), {"clean": False}, escape(f"the check could not run: {exc}", 600))
        return True
    data = store.source_bytes(row["source"])
    try:  # a program's build from the cache (built once, by the build queue): never built here
        src = playable(db, int(row["id"]), str(row["bot"]), data) if is_bundle(data) else None
    except NotReady:  # its cached build was missing or damaged: built again, then checked
        builds.release_check(db, int(row["id"]))
        return True
    except BotLoadError:
        src = None  # not a bot: check_one says why
    began = time.monotonic()
    report, error, games = check_one(row, replace(settings, rules=rules), src)
    with store.writing(db):  # before the report: a page that shows it can link them
        save_check_games(db, int(row["id"]), [{**g, "log": store.pack(g["log"])} for g in games])
    store.finish_check(db, int(row["id"]), report, error)
    events.say(db, verdict_line(db, row, error, time.monotonic() - began))
    prepare_view(db, int(row["id"]))  # after the check: its author is not kept waiting for the desk's view
    return True


def verdict_line(db: sqlite3.Connection, row: sqlite3.Row, error: str | None, seconds: float) -> str:
    """The log's line for a check: whose upload, and its verdict."""
    who = f"{row['bot']} v{row['version']} (submission {row['id']}, by {store.author_name(db, int(row['author']))})"
    return f"check of {who}: {'failed' if error else 'clean'} in {seconds:.1f} s{': ' + error if error else ''}"


def prepare_view(db: sqlite3.Connection, submission: int) -> None:
    """Make and store the desk's view of ``submission`` (:func:`.review.make`: each step bounded, in
    a child process); a view that cannot be made is stored as its problem, never tried again and again."""
    from ..store import reviews
    from . import review

    row = store.submission(db, submission)
    if row is None:
        return
    try:
        view = review.make(str(row["bot"]), store.source_bytes(row["source"]), reviews.previous(db, submission))
    except Exception as exc:  # noqa: BLE001 - a bug an upload provoked: that view says so, the queue goes on
        view = {"format": review.FORMAT, "files": [], "previous": None, "diff": {"state": "none", "files": []}}
        view["problem"] = escape(f"the view could not be made ({type(exc).__name__}: {exc})", 300)
    reviews.save(db, submission, view)


def prepare_missing_view(db: sqlite3.Connection) -> bool:
    """Make the view of one checked upload that has none (checked by an older arena, or its worker
    died between the check and the view); whether there was one."""
    from ..store import reviews

    submission = reviews.missing(db)
    if submission is None:
        return False
    prepare_view(db, submission)
    return True
