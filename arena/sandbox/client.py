"""The referee's side of the sandbox, by its old single-module name (kept for imports).

The code lives by concern in :mod:`.limits` (what a bot may use, clocks, CPU
pinning), :mod:`.process` (the template and game processes, the watchdog),
:mod:`.player` (:class:`WorkerPlayer`) and :mod:`.pool` (:class:`SandboxFactory`).
"""

from __future__ import annotations

from .limits import Limits, cpu_clock, cpu_seconds, current_cpu, pin_to_one_cpu, usable_cpus
from .player import WorkerPlayer
from .pool import SUPERVISION, SandboxFactory, sandboxed_factory, supervision
from .process import ProtocolViolation, Template, WorkerError, WorkerProcess, WorkerTimeout, describe_exit
from .zygote import UID_BASE

__all__ = [
    "Limits",
    "cpu_clock",
    "cpu_seconds",
    "current_cpu",
    "pin_to_one_cpu",
    "usable_cpus",
    "WorkerPlayer",
    "SUPERVISION",
    "SandboxFactory",
    "sandboxed_factory",
    "supervision",
    "ProtocolViolation",
    "Template",
    "WorkerError",
    "WorkerProcess",
    "WorkerTimeout",
    "describe_exit",
    "UID_BASE",
]
