"""A bound on the memory of a whole process tree: a build and every process it starts.

RLIMIT_AS bounds one process. A build may start :attr:`~arena.sandbox.programs.build.BuildLimits.processes`
of them (compilers fork), so per-process limits alone let one build hold processes x limit (an
independent attack held 9 GiB with five processes of 1.8 GiB each, under a 2 GiB limit; 64 of
them would take 128 GiB and get the server killed by the host). A *memory group* is a control
group of its own for the build, made before the build starts, that the kernel charges every
page of the build's tree to (its tmpfs folder's pages too) and that it reclaims within, or kills
within, past its limit: the build fails, no other process is touched.

The group is made under the memory controller this process may write: cgroup v1's
``/sys/fs/cgroup/memory`` (``memory.limit_in_bytes``, ``memory.failcnt``) or the unified
hierarchy's ``/sys/fs/cgroup`` when it delegates memory (``memory.max``, ``memory.events``). On
a host that offers neither (an unprivileged referee, a container without its cgroup mounted),
:func:`make` returns None and the build runs with its per-process limits only (ruling 157).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time

from ...trust.numbers import whole_number

#: Where groups may be made: (the controller's folder, its version).
ROOTS = (("/sys/fs/cgroup/memory", 1), ("/sys/fs/cgroup", 2))
#: The folder under a root that holds arena's groups (one per running build).
PARENT = "arena"


class MemoryGroup:
    """A control group bounding the memory of the processes put in it (and all their children)."""

    def __init__(self, path: str, version: int) -> None:
        self.path, self.version = path, version

    def add(self, pid: int) -> None:
        """Put ``pid`` in the group (its children, forked after this, are born in it).

        :raises OSError: the kernel refused."""
        _write(os.path.join(self.path, "cgroup.procs"), str(pid))

    def ran_out(self) -> bool:
        """Whether the kernel killed a process of the group for the group's limit."""
        try:
            name = "memory.oom_control" if self.version == 1 else "memory.events"
            words = _read(os.path.join(self.path, name)).split()
            counts = dict(zip(words[::2], words[1::2], strict=False))
            return int(counts.get("oom_kill", 0)) > 0
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        """Remove the group once its processes are gone (a few tries: the last exit is seen late)."""
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)


def make(limit: int) -> MemoryGroup | None:
    """A new, empty group limited to ``limit`` bytes (swap included where the host counts it),
    or None where this process may make none."""
    for root, version in ROOTS:
        group = _make_under(root, version, limit)
        if group is not None:
            return group
    return None


def _make_under(root: str, version: int, limit: int) -> MemoryGroup | None:
    if version == 2 and "memory" not in _read(os.path.join(root, "cgroup.controllers")).split():
        return None
    if version == 1 and not os.path.exists(os.path.join(root, "memory.limit_in_bytes")):
        return None
    parent = os.path.join(root, PARENT)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(parent, 0o700)
        if version == 2:  # the parent hands the memory controller to its children
            _write(os.path.join(parent, "cgroup.subtree_control"), "+memory")
        _sweep(parent)
        path = os.path.join(parent, f"build-{os.getpid()}-{secrets.token_hex(4)}")
        os.mkdir(path, 0o700)
    except OSError:
        return None
    group = MemoryGroup(path, version)
    try:
        if version == 1:
            _write(os.path.join(path, "memory.limit_in_bytes"), str(limit))
            with contextlib.suppress(OSError):  # only where the host accounts swap
                _write(os.path.join(path, "memory.memsw.limit_in_bytes"), str(limit))
        else:
            _write(os.path.join(path, "memory.max"), str(limit))
            with contextlib.suppress(OSError):
                _write(os.path.join(path, "memory.swap.max"), "0")
    except OSError:
        group.close()
        return None
    return group


def _sweep(parent: str) -> None:
    """Remove the groups of referees that are gone (killed mid-build: their build died with them, its
    empty group stayed); a group still in use refuses to go, and stays."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        pid = whole_number(parts[1], 1, 2**31, given="text") if len(parts) == 3 and parts[0] == "build" else None
        if pid is None:
            continue
        try:
            os.kill(pid, 0)
            continue  # its referee lives: its build may be running
        except ProcessLookupError:
            pass
        except OSError:
            continue
        with contextlib.suppress(OSError):
            os.rmdir(os.path.join(parent, name))


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as f:
            return f.read(65536)
    except (OSError, UnicodeDecodeError):
        return ""


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode("ascii"))
    finally:
        os.close(fd)
