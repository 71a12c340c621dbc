"""How a sandbox process fails, and how the failure is told: the errors the referee's end
raises (each a fault kind), an exit status in words, a worker's text made safe to show."""

from __future__ import annotations

import os
import signal
from typing import Any

from ..game.events import FaultKind

_SIGNALS = {
    signal.SIGKILL: "killed",
    signal.SIGSYS: "killed by the seccomp filter (SIGSYS)",
    signal.SIGXCPU: "over its CPU-time limit (SIGXCPU)",
    signal.SIGSEGV: "crashed (SIGSEGV)",
    signal.SIGABRT: "aborted (SIGABRT)",
}


class WorkerError(Exception):
    """The worker is unusable: it died, missed a deadline or broke the protocol."""

    kind = FaultKind.CRASH


class WorkerTimeout(WorkerError):
    kind = FaultKind.TIMEOUT


class ProtocolViolation(WorkerError):
    pass


class Overload(WorkerError):
    """The seat's messages cost the referee more CPU than ``Limits.referee_turn_seconds``."""

    kind = FaultKind.TIMEOUT


def describe_exit(code: int | None) -> str:
    """How a process ended, for a fault's detail."""
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            sig = signal.Signals(-code)
        except ValueError:
            return f"killed by signal {-code}"
        return _SIGNALS.get(sig, f"killed by {sig.name}")
    return f"exited with status {code}"


def clean(text: Any, limit: int) -> str:
    """A string from the worker, cut to ``limit`` and safe to write anywhere."""
    shown: str = text if type(text) is str else repr(text)
    return shown[:limit].encode("utf-8", "replace").decode("utf-8")


def tail(fd: int) -> str:
    """The last line written to a (non-blocking) stderr pipe."""
    err = b""
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except (BlockingIOError, OSError, ValueError):
            break
        if not data:
            break
        err = (err + data)[-4096:]
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:160] if lines else ""
