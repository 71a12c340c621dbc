"""The ``rlimits`` layer of a sandbox process (see :mod:`arena.sandbox.jail.harden`).

RLIMIT_AS, RLIMIT_FSIZE and RLIMIT_CORE are inherited by fork: a template
sets them once (:func:`_lower_inherited`) and each game process reads them
back; RLIMIT_CPU (counted from the process's fork), RLIMIT_NOFILE and
RLIMIT_NPROC are set in each game process (:func:`_layer_rlimits`). Every
limit is set and read back; a problem is reported, never raised half-way.
"""

from __future__ import annotations

import os
import resource


def _status_fields(*names: str) -> dict[str, str]:
    """Fields of /proc/self/status (read once), those found among ``names``."""
    found: dict[str, str] = {}
    try:
        with open("/proc/self/status", "rb") as fh:  # binary: no codec lookup (imports may be impossible)
            for raw in fh:
                key, _, value = raw.decode().partition(":")
                if key in names:
                    found[key] = value.strip()
    except OSError:
        pass
    return found


def _status_field(name: str) -> str | None:
    """A field of /proc/self/status, or None."""
    return _status_fields(name).get(name)


_INHERITED_LIMITS = ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_CORE")


def _lower(name: str, soft: int, hard: int, problems: list[str], set_to: list[str]) -> None:
    """Lower one resource limit and read it back; a problem is appended, never raised."""
    res = getattr(resource, name)
    try:
        cur_hard = resource.getrlimit(res)[1]
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(res, (soft, hard))
        got = resource.getrlimit(res)
        if got != (soft, hard):
            problems.append(f"{name} is {got}, wanted {(soft, hard)}")
        else:
            set_to.append(f"{name[7:]}={soft}" + ("" if soft == hard else f"/{hard}"))
    except (OSError, ValueError) as exc:
        problems.append(f"{name}: {exc}")


def _lower_inherited(memory_bytes: int) -> tuple[list[str], list[str]]:
    """RLIMIT_AS, RLIMIT_FSIZE and RLIMIT_CORE: (problems, what was set)."""
    problems: list[str] = []
    set_to: list[str] = []
    vm_kib = _status_field("VmSize")
    in_use = int(vm_kib.split()[0]) * 1024 if vm_kib else 0
    if memory_bytes <= in_use:
        problems.append(f"RLIMIT_AS: memory_bytes {memory_bytes} is not above the {in_use} bytes already mapped")
    else:
        _lower("RLIMIT_AS", memory_bytes, memory_bytes, problems, set_to)
    _lower("RLIMIT_FSIZE", 0, 0, problems, set_to)
    _lower("RLIMIT_CORE", 0, 0, problems, set_to)
    set_to.append(f"(address space in use {in_use >> 20} MiB)")
    return problems, set_to


def _layer_rlimits(memory_bytes: int, cpu_seconds: int, open_fds: list[int], started: str | None = None) -> str:
    """Lower the resource limits; returns a note, raises listing any that failed.

    ``started``: the problems the template met setting the inherited limits (None: it did
    not set them, so they are set here); those are then read back, not set again."""
    problems: list[str] = []
    set_to: list[str] = []
    if started is None:
        problems, set_to = _lower_inherited(memory_bytes)
    else:
        if started:
            problems.append(started)
        wanted = {"RLIMIT_AS": memory_bytes, "RLIMIT_FSIZE": 0, "RLIMIT_CORE": 0}
        for name in _INHERITED_LIMITS:
            got = resource.getrlimit(getattr(resource, name))
            if got != (wanted[name], wanted[name]) and not started:
                problems.append(f"{name} is {got}, wanted {(wanted[name],) * 2} (inherited)")
        set_to.append("read back;")
    _lower("RLIMIT_CPU", cpu_seconds, cpu_seconds + 1, problems, set_to)
    nofile = (max(open_fds) if open_fds else 2) + 4
    _lower("RLIMIT_NOFILE", nofile, nofile, problems, set_to)
    _lower("RLIMIT_NPROC", 0, 0, problems, set_to)
    if problems:
        raise RuntimeError("; ".join(problems))
    note = " ".join(set_to)
    if os.geteuid() == 0:
        note += "; RLIMIT_NPROC not enforced for root"
    return note
