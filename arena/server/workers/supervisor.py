"""Starts the server's background workers and starts them again when they die.

A dead check worker's claimed upload goes back into the queue before its successor
starts (:func:`arena.server.store.database.requeue`), so no upload waits forever for a check that
died; a dead build worker's claimed build too (:func:`arena.server.store.builds.requeue`).
The tables worker (when ``tables`` is given: the server's :class:`~arena.server.tables.hub.Hub`
attaches each one started) talks with the server over its stdin and stdout; its successor resumes
the tables it played (:mod:`arena.server.tables.worker`).
Each start and restart is one line in the log (:mod:`arena.server.store.events`); the desk's health
reads which workers are alive, since when, and how often each was restarted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..store import builds, events
from ..store import database as store

#: Seconds between looks at the workers, and the wait before starting a crashed one again.
POLL_SECONDS = 0.5
RESTART_SECONDS = 1.0


@dataclass
class Supervisor:
    folder: Path
    checkers: int = 1
    ladder: int = 1
    check_games: int = 2
    #: Where the ladder's and the final's games run: "local" (``ladder`` processes) or "ray"
    #: (one ladder process keeping ``ladder`` blocks in flight on Ray).
    backend: str = "local"
    #: With backend "ray": the cluster the ladder joins (None: a local Ray instance).
    ray_address: str | None = None
    #: Build workers: bot programs' builds run in these, one each, at most one per author at a time.
    builders: int = 2
    #: Given: a tables worker is started (and started again), each one handed to it.
    tables: Callable[[subprocess.Popen[bytes]], None] | None = None
    #: The ladder's pace (games per bot an hour, 0: none), busy share, games kept whole (0: the
    #: default) and disk budget in bytes (None: none): :mod:`arena.server.ladder.pace`, ``.retention``.
    pace: float = 0.0
    ladder_cpu: float = 1.0
    keep_games: int = 0
    disk_budget: int | None = None
    procs: dict[tuple[str, int], subprocess.Popen[bytes]] = field(default_factory=dict)
    restarts: int = 0
    #: Per worker slot: when its process started (time.time()), and how many times it was restarted.
    started: dict[tuple[str, int], float] = field(default_factory=dict)
    restarted: dict[tuple[str, int], int] = field(default_factory=dict)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _spawn(self, kind: str) -> subprocess.Popen[bytes]:
        cmd = [
            sys.executable,
            "-m",
            "arena.server.workers.processes",
            kind,
            str(self.folder),
            "--check-games",
            str(self.check_games),
            "--parent",
            str(os.getpid()),
        ]
        if kind == "ladder" and self.backend == "ray":
            cmd += ["--backend", "ray", "--workers", str(self.ladder)]
            if self.ray_address:
                cmd += ["--ray-address", self.ray_address]
        if kind == "ladder":  # each local worker keeps its share of the pace; Ray's one process all of it
            share = 1.0 if self.backend == "ray" else 1.0 / max(1, self.ladder)
            cmd += ["--pace", repr(self.pace), "--share", repr(share), "--cpu", repr(self.ladder_cpu)]
            cmd += ["--keep-games", str(self.keep_games), "--disk-budget", str(self.disk_budget or 0)]
        if kind == "tables":
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=False)
            if self.tables is not None:
                self.tables(proc)
            return proc
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=False)

    def _start(self, slot: tuple[str, int]) -> None:
        self.procs[slot] = proc = self._spawn(slot[0])
        self.started[slot] = time.time()
        self.restarted.setdefault(slot, 0)
        if not self.restarted[slot]:
            events.say_in(self.folder, f"{slot[0]} worker started (pid {proc.pid})")

    def start(self) -> None:
        db = store.open_db(self.folder)
        try:
            store.requeue(db)  # checks claimed by workers of an earlier run that died
            builds.requeue(db)  # ... and builds
            from ..contest.final import interrupted

            interrupted(db)
        finally:
            db.close()
        for i in range(self.checkers):
            self._start(("check", i))
        for i in range(self.builders):
            self._start(("build", i))
        for i in range(min(self.ladder, 1) if self.backend == "ray" else self.ladder):
            self._start(("ladder", i))
        if self.tables is not None:
            self._start(("tables", 0))
        self._thread = threading.Thread(target=self._watch, name="arena-supervisor", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stopping.wait(POLL_SECONDS):
            for slot, proc in list(self.procs.items()):
                if proc.poll() is None or self._stopping.is_set():
                    continue
                if slot[0] in ("check", "build"):
                    db = store.open_db(self.folder)
                    try:
                        (store.requeue if slot[0] == "check" else builds.requeue)(db, proc.pid)
                    finally:
                        db.close()
                time.sleep(RESTART_SECONDS)
                if not self._stopping.is_set():
                    self.restarts += 1
                    self.restarted[slot] = self.restarted.get(slot, 0) + 1
                    self._start(slot)
                    events.say_in(
                        self.folder,
                        f"{slot[0]} worker (pid {proc.pid}) {ended(proc.returncode)}; started again as pid "
                        f"{self.procs[slot].pid} (restart {self.restarted[slot]})",
                        "error",
                    )

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM every worker, then SIGKILL what is still running after ``grace`` seconds."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + grace
        for proc in self.procs.values():
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def ended(code: int | None) -> str:
    """How a worker's process ended, in words."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed ({name})"
    return f"exited with code {code}"
