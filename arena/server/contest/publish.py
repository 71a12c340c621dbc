"""Playing and publishing a final (:mod:`.final`): the commands an organiser would type, run for them.

Everything is written under ``DIR/final/N/`` (this module makes it): ``bots/`` (each entrant's
stored, checked bytes, and beside each a manifest naming its author, so the tournament checks the
bytes against it and records the author), ``final.sqlite`` (``arena tournament``, sandboxed, under
the round's rules; it resumes from this database when run again), ``records/``, ``site/``
(``arena report --title "CONTEST: final of round N" --house ...``), and ``final.log`` (what the two
commands printed, when the desk ran them). Registered house bots play by their names.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...authoring.submissions import write_atomic
from ..store import database as store
from ..store import events
from . import final
from .final import FinalSettings
from .lineup import Entry, entrants

#: A final entrant's label: a bot's name (NAME_PATTERN), and ``.vN`` when it enters two versions.
LABEL = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}(\.v[0-9]{1,9})?")
#: Bytes of a failed command's output read for the state's one-line detail.
TAIL = 4000
#: Exit statuses of a command stopped by a signal (Ctrl-C, SIGTERM): the final is resumable.
STOPPED = frozenset({130, 143, -2, -15})
#: The state's detail of a final that stopped before it was published.
INTERRUPTED = "stopped before it was published; run it again to resume"


def call(cmd: Sequence[str], out: Any = None) -> int:
    """Run ``cmd`` (into ``out``, else this process's terminal) and return its exit status; if this
    process is stopped meanwhile (SIGTERM, Ctrl-C), the command is asked to stop too (SIGTERM: it
    stores what finished) and waited for, then the stop goes on."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT if out else None)
    try:
        return proc.wait()
    except BaseException:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise


def write_entrant(bots: Path, entry: Entry, data: bytes) -> None:
    """A stored version as the tournament reads it (``LABEL.py``, ``LABEL.js`` or a folder ``LABEL/``:
    a program's bundle unpacked, bundled again by the tournament into the same bytes), and its
    manifest ``LABEL.json`` (name, file, sha256 of what the tournament will hash, author). Files
    already there with these bytes are kept (a resumed final). The label is a bot's name as uploads
    are named (and ``.vN``): a name read back from the database is checked before it names a file.

    :raises store.ContestError: a label that is no bot name."""
    from ...seats.loader import resolve_bot
    from .uploads import is_bundle, stored_bot

    if not LABEL.fullmatch(entry.label):
        raise store.ContestError(f"the entrant {entry.label[:60]!r} is no bot name (a damaged contest database?)")
    files: tuple[tuple[str, bytes], ...] = ((f"{entry.label}.py", data),)
    target = f"{entry.label}.py"
    if is_bundle(data):
        try:
            src = stored_bot(entry.bot, data)
        except Exception:  # noqa: BLE001 - an unreadable stored bundle plays as the crashed file it is
            src = None
        if src is not None and src.runtime == "node":
            files, target = ((f"{entry.label}.js", src.files[0][1]),), f"{entry.label}.js"
        elif src is not None:
            files, target = tuple((f"{entry.label}/{rel}", content) for rel, content in src.files), entry.label
    for rel, content in files:
        path = bots / rel
        if not (path.is_file() and not path.is_symlink() and path.read_bytes() == content):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, content)
    sha = resolve_bot(str(bots / target), lenient=True).sha256
    manifest = {"name": entry.label, "file": target, "sha256": sha, "author": entry.author}
    write_atomic(bots / f"{entry.label}.json", (json.dumps(manifest) + "\n").encode())


def sizes(settings: FinalSettings, count: int, seats: Sequence[int]) -> list[int]:
    """The final's table sizes: the settings' own, or every size from 2 to 6 that ``count``
    entrants fill and the round's rules seat (``seats``)."""
    if settings.players:
        return list(settings.players)
    return [k for k in seats if k <= count]


def tournament_argv(
    folder: Path,
    number: int,
    chosen: Sequence[Entry],
    settings: FinalSettings,
    variant: str,
    rules: Sequence[str],
    seats: Sequence[int],
    backend: Sequence[str],
    quiet: bool,
) -> list[str]:
    """``arena tournament`` as the organiser would type it for this final."""
    where = final.home(folder, number)
    files = [e for e in chosen if e.house != "registered"]
    names = [e.bot for e in chosen if e.house == "registered"]
    argv = [*([str(where / "bots")] if files else []), *names]
    argv += ["--players", ",".join(str(k) for k in sizes(settings, len(chosen), seats))]
    argv += ["--db", str(where / "final.sqlite"), "--replays", str(where / "records")]
    argv += ["--build-cache", str(Path(folder) / "builds")]  # the build queue's cache: its programs are built there
    argv += ["--variant", variant, *(x for r in rules for x in ("--rule", r))]
    if settings.until_separated:
        argv += ["--until-separated", "--confidence", repr(settings.confidence)]
        argv += ["--budget", str(settings.budget)] if settings.budget else []
        argv += ["--top", str(settings.top)] if settings.top else []
    if settings.games:
        argv += ["--games", str(settings.games)]
    for option, value in (
        ("--seed", settings.seed),
        ("--max-tables", settings.max_tables),
        ("--move-time", settings.move_seconds),
        ("--game-time", settings.game_seconds),
    ):
        if value is not None:
            argv += [option, str(value)]
    return [*argv, *backend, *(["--quiet"] if quiet else [])]


def report_argv(folder: Path, number: int, contest: str, chosen: Sequence[Entry]) -> list[str]:
    """``arena report`` for this final: the contest's name and the round in the title, house bots marked."""
    where = final.home(folder, number)
    title = f"{contest}: final of round {final.ORDINAL.get(number, number)}"
    argv = ["--db", str(where / "final.sqlite"), "--replays", str(where / "records"), "--out", str(where / "site")]
    argv += ["--title", title, "--quiet", "--workers", "1"]
    for e in chosen:
        if e.house:
            argv += ["--house", e.label]
    return argv


def run(
    db: sqlite3.Connection,
    folder: Path,
    number: int,
    settings: FinalSettings,
    backend: Sequence[str] = ("--workers", "1"),
    show: bool = False,
) -> bool:
    """Play and publish round ``number``'s final (begun by :func:`.lineup.begin`); its state says how it
    went (one line when it failed). ``show``: the commands print to this process's terminal (the
    command line); else into ``final.log``. Returns whether it was published."""
    from .rounds import get_round

    where = final.home(folder, number)
    try:
        rnd = get_round(db, number)
        chosen = entrants(db, number, settings)
        (where / "bots").mkdir(parents=True, exist_ok=True)
        for e in chosen:  # the stored, checked bytes; the same files again when resumed
            if e.house != "registered":
                row = store.submission(db, e.submission)
                write_entrant(where / "bots", e, store.source_bytes(row["source"] if row else b""))
        final.update_state(db, number, entrants=[e.label for e in chosen], house=[e.label for e in chosen if e.house])
        names = ", ".join(e.label for e in chosen)
        events.say(
            db, f"final of round {number} started: {len(chosen)} entrants ({names[:300]}); {settings.described()}"
        )
        contest = store.setting(db, "name")
        steps = [
            tournament_argv(folder, number, chosen, settings, rnd.variant, rnd.settings, rnd.sizes, backend, not show),
            report_argv(folder, number, contest, chosen),
        ]
        log = where / "final.log"
        for command, argv in zip(("tournament", "report"), steps, strict=True):
            cmd = [sys.executable, "-m", "arena", command, *argv]
            if show:
                code = call(cmd)
                line = f"`arena {command}` failed (exit {code}); its message is above"
            else:
                with open(log, "ab") as out:
                    out.write(f"$ arena {command} {' '.join(argv)}\n".encode())
                    out.flush()
                    code = call(cmd, out)
                line = last_line(log) or f"exit {code}"
            if code in STOPPED:
                final.update_state(db, number, state="interrupted", detail=INTERRUPTED)
                return False
            if code != 0:
                final.update_state(db, number, state="failed", detail=f"arena {command} failed: {line[:300]}")
                events.say(db, f"final of round {number} failed: arena {command} failed: {line[:300]}", "error")
                return False
    except BaseException as exc:
        if not isinstance(exc, (store.ContestError, OSError)):  # stopped (SIGTERM, Ctrl-C): resumable
            final.update_state(db, number, state="interrupted", detail=INTERRUPTED)
            raise
        detail = f"{where}: {exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)
        final.update_state(db, number, state="failed", detail=detail[:400])
        events.say(db, f"final of round {number} failed: {detail[:300]}", "error")
        return False
    final.update_state(db, number, state="published", detail="", published=time.time())
    events.say(db, f"final of round {number} published at /final/{number}/: {len(chosen)} entrants")
    return True


def last_line(log: Path) -> str:
    """The last line a command wrote to the log."""
    try:
        with open(log, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - TAIL))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [x for x in tail.splitlines() if x.strip() and not x.startswith("$ arena")]
    return lines[-1] if lines else ""


def tournament_backend(backend: str, workers: int, ray_address: str | None = None) -> list[str]:
    """The tournament's options for the server's backend: Ray with the ladder's worker count (on
    the cluster at ``ray_address``, else a local instance), or one local process."""
    if backend != "ray":
        return ["--workers", "1"]
    return ["--backend", "ray", "--workers", str(workers), *(["--ray-address", ray_address] if ray_address else [])]


def start(folder: Path, number: int, settings: Any = None) -> subprocess.Popen[bytes]:
    """Start the desk's final in its own process (``python -m arena.server.workers.processes final DIR
    --round N``, on the server's backend: :class:`..http.settings.ServerSettings`'s ``backend``,
    ``ladder_workers``, ``ray_address``). The server stops it when it stops (SIGTERM: the final is
    then interrupted, and resumes when run again)."""
    backend = getattr(settings, "backend", "local")
    options = ["--backend", "ray", "--workers", str(max(1, settings.ladder_workers))] if backend == "ray" else []
    address = getattr(settings, "ray_address", None)
    if options and address:
        options += ["--ray-address", address]
    return subprocess.Popen(
        [sys.executable, "-m", "arena.server.workers.processes", "final", str(folder), "--round", str(number)]
        + ["--parent", str(os.getpid()), *options],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # its stderr is the server's: its lines (started, published) are the log's
    )
