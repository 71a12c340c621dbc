"""The sandbox: untrusted bot code in isolated, hardened processes (docs/SECURITY.md).

Two layers for a Python bot: the code policy (:mod:`.policy`, RestrictedPython) and the game
process forked from the bot's template (:mod:`.python`), hardened by the OS jail (:mod:`.jail`:
namespaces, a leased uid, rlimits, seccomp). A bot program in another language (:mod:`.programs`)
runs under the jail alone, speaking protocol v1 on its stdin and stdout. Both kinds are seated by
one base (:mod:`.seat`: the bank, the clocks, the turn bounds, the fault mapping), with time and
memory enforced from outside by the referee (:mod:`.limits`, :mod:`.jail.watchdog`).

The names below are imported on first use (PEP 562), not with the package: a
bot's template process (:mod:`.python.zygote`) imports ``arena.sandbox.python.zygote`` and so
this package, and must not pull in the referee's side (``subprocess``,
``threading``, the watchdog): every module it holds makes each fork dearer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..seats.factories import sandboxed_factory
    from ..trust.botsource import BotSource
    from .limits import Limits
    from .python.factory import SandboxFactory
    from .python.seat import SandboxedSeat

__all__ = ["sandboxed_factory", "Limits", "check_source", "hardening_report", "SandboxFactory", "SandboxedSeat"]

#: Public name -> the submodule that defines it.
_LAZY = {
    "Limits": "limits",
    "SandboxedSeat": "python.seat",
    "SandboxFactory": "python.factory",
    "sandboxed_factory": "..seats.factories",  # the one dispatcher, for untrusted source
}


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module if module.startswith(".") else f".{module}", __name__), name)
    globals()[name] = value
    return value


def check_source(src: BotSource) -> None:
    """Everything that can be checked of a bot without running it: a Python file's code policy
    (:func:`.policy.compiler.check_source`), a ``.js`` file's syntax (compiled by node in the
    program sandbox, never run: :func:`.programs.runtimes.check_syntax`).

    :raises BotLoadError: what is wrong, with its file and line."""
    from .policy.compiler import check_source as static_check

    static_check(src)
    if src.runtime == "node":
        from .programs.runtimes import check_syntax

        check_syntax(src)


def hardening_report(uid: int | None = None) -> Any:
    """Which hardening layers a worker gets on this machine (a :class:`.jail.harden.HardenReport`).

    Starts a throw-away hardened interpreter (:func:`.jail.probe.probe`).
    """
    from .jail.probe import probe

    return probe(uid=uid)
