"""The sandbox: untrusted bot code in isolated, hardened worker processes.

Two layers (docs/SECURITY.md): the code policy (:mod:`.policy`, RestrictedPython)
and the worker process (:mod:`.worker`, :mod:`.client`, hardened by :mod:`.harden`),
with time and memory limits enforced from outside by the referee.
"""

from __future__ import annotations

from typing import Any

from .limits import Limits
from .player import WorkerPlayer
from .policy import check_source
from .pool import SandboxFactory, sandboxed_factory

__all__ = ["sandboxed_factory", "Limits", "check_source", "hardening_report", "SandboxFactory", "WorkerPlayer"]


def hardening_report(uid: int | None = None) -> Any:
    """Which hardening layers a worker gets on this machine (a :class:`.harden.HardenReport`).

    Starts a throw-away hardened interpreter (:func:`.harden.probe`).
    """
    from .harden import probe

    return probe(uid=uid)
