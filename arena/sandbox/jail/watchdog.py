"""The watchdog: one thread per referee process that kills sandbox processes past their deadline."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from ..limits import cpu_seconds

_NEVER = float("inf")


class _Watchdog:
    """One thread per referee process that kills processes whose deadline has passed.

    The referee reads and writes its pipes with plain blocking calls (the
    cheapest way: no poll per message); a process that misses its deadline is
    killed from here, which ends the blocked call with end-of-file.

    Arming is two attribute writes (``deadline``, wall clock; ``cpu_deadline``,
    the process's CPU clock), with no lock: the thread reads each clock *before*
    it reads the matching deadline, and the referee reads the clocks *after* it
    clears them (:meth:`GameProcess.end`), so a process the thread kills is
    always one the referee itself finds late.
    """

    PERIOD = 0.005

    def __init__(self) -> None:
        self.workers: dict[int, Any] = {}
        self.thread: threading.Thread | None = None
        self.pid = 0

    def watch(self, worker: Any) -> None:
        if self.pid != os.getpid():  # first use, or a forked child: start afresh
            self.workers = {}
            self.pid = os.getpid()
            self.thread = threading.Thread(target=self._run, name="arena-sandbox-watchdog", daemon=True)
            self.thread.start()
        self.workers[id(worker)] = worker

    def forget(self, worker: Any) -> None:
        if self.pid == os.getpid():
            self.workers.pop(id(worker), None)

    def _run(self) -> None:
        monotonic, sleep = time.monotonic, time.sleep
        while True:
            sleep(self.PERIOD)
            for worker in list(self.workers.values()):
                if worker.deadline == _NEVER or worker.timed_out:
                    continue
                cpu = -1.0
                if worker.cpu_deadline != _NEVER:
                    try:
                        cpu = cpu_seconds(worker.clock)
                    except OSError:
                        cpu = -1.0
                now = monotonic()  # the clocks first, then the deadlines (see the class docstring)
                if now > worker.deadline or cpu > worker.cpu_deadline:
                    worker.timed_out = True
                    worker.signal_kill()


_watchdog = _Watchdog()
