"""OS-level hardening of a sandbox worker process (Linux only).

The worker calls :func:`harden` once at start-up: after it has imported every
module that it, and the bots it will run, will ever need, and before any bot
code is loaded.  ``harden`` then locks the process down in layers and reports
what it got.  Every layer is attempted and reported, never silently skipped;
``harden`` itself never raises for a layer that does not work.

Layers (reported in this order; *applied* in the order workdir, netns, uid,
rlimits, no_new_privs, seccomp, because the namespace and uid steps need the
root privileges the later steps give up). A bot's template process
(:mod:`arena.sandbox.python.zygote`, which never runs bot code) takes in itself every
layer a fork inherits and a game process may share: :func:`harden_template`
(workdir, netns), then :func:`template_limits` (the rlimits on memory and file
data, no_new_privs, not dumpable). Each game process forked from it takes the
rest, which are its own (:func:`harden_child`: its uid, RLIMIT_CPU counted from
its fork, RLIMIT_NOFILE for its descriptors, RLIMIT_NPROC, seccomp with its pid)
and checks the inherited ones with a read-back before it reports them.
:func:`harden` does all of it in one process.

``workdir``
    chdir into a freshly made empty directory, then remove it: the cwd is a
    deleted directory in which nothing can ever be created (not even by root).
    With ``workdir=PATH`` the worker uses that (empty) directory instead and
    makes it mode 0555; the caller removes it afterwards.
``rlimits``
    RLIMIT_AS ``memory_bytes`` (checked against the address space in use);
    RLIMIT_CPU ``cpu_seconds`` soft (SIGXCPU) and
    one more second hard (SIGKILL), counted from the start of the process;
    RLIMIT_FSIZE 0 (no file data can be written: writes to regular files fail
    with EFBIG, Python ignores SIGXFSZ); RLIMIT_CORE 0; RLIMIT_NOFILE = highest
    open fd + 4; RLIMIT_NPROC 0 (enforced only once the uid is dropped: the
    kernel does not apply it to root).  AS, FSIZE and CORE are set in the
    template; CPU, NOFILE and NPROC in the game process (a template must keep
    forking: RLIMIT_NPROC 0 would stop a template not run as root, and
    RLIMIT_CPU counts a process's whole life).
``netns``
    ``unshare(CLONE_NEWNET)``: a new, empty network namespace whose loopback
    is down, so no socket reaches anything, not even the host's 127.0.0.1 or
    abstract unix sockets.  Needs CAP_SYS_ADMIN; when not root, a new user
    namespace is tried too (``CLONE_NEWUSER|CLONE_NEWNET``).
``uid``
    When running as root and given ``uid``: ``setgroups([])``, then real,
    effective and saved gid and uid all set to ``uid``.  All capabilities are
    lost (checked with capget: the permitted and effective sets are empty, and
    so the ambient one, which the kernel keeps within them).  Use a uid distinct
    per concurrent worker (e.g. ``60000 + slot``).
``no_new_privs``
    ``prctl(PR_SET_NO_NEW_PRIVS, 1)`` and ``prctl(PR_SET_DUMPABLE, 0)`` (no
    ptrace from other processes of the same uid, no core dumps).  Both are
    inherited by fork; the game process reads them back after its uid drop
    (which resets dumpable to ``fs.suid_dumpable``) and clears dumpable again
    if needed.
``seccomp``
    A syscall allowlist (see :data:`SECCOMP_ALLOW`) loaded through pyseccomp.
    Anything not listed fails with EPERM (a "soft" denial: Python raises
    ``PermissionError`` and the worker lives on): among others socket/connect,
    every open/openat (the worker cannot open any file, even for reading),
    stat of paths, unlink, mkdir, rename, chmod, setuid, setrlimit.  Dangerous
    syscalls (:data:`SECCOMP_KILL`: fork, clone, execve, ptrace, signals to
    other processes, namespaces, mount, bpf...) kill the whole worker at once
    with SIGSYS.  The filter's bad-architecture action (32-bit ``int 0x80``
    and x32 syscalls) is kill too.  ``newfstatat`` is allowed only with
    AT_EMPTY_PATH (glibc's fstat); a raw syscall could still stat a path's
    metadata that way, never its content.

Process results the referee will see: a worker killed by seccomp ends with
SIGSYS (returncode -31), by the CPU limit with SIGXCPU (-24) or SIGKILL (-9);
an allocation above the memory limit raises ``MemoryError`` in the worker.

What the worker (the integrator) must respect:

* Import everything first: every module the worker and the bots' allowed
  imports need (``random``, ``math``, ``json``, RestrictedPython...), and any
  codec it will use.  After ``harden`` no file can be opened; and after the
  uid drop the Python installation may be unreadable anyway (here it lives
  under /root, mode 0700).  A late import fails with ModuleNotFoundError;
  tracebacks lose their source lines (harmless).  Bot source must come over
  the pipe, or be read before ``harden``.
* Stay single-threaded: creating a thread (clone/clone3) kills the worker.
  For in-worker timeouts ``signal.alarm``/``setitimer`` are allowed.
* stdout/stderr must be pipes (or /dev/null), not regular files: with
  RLIMIT_FSIZE 0 a write to a regular file fails with EFBIG (a buffered
  stdout to a file then makes the interpreter exit with status 120).
* Pass only the descriptors the worker needs (``close_fds=True``): it can
  read and write every descriptor it inherits.
* RLIMIT_CPU counts the worker's whole lifetime, not one move: per-move time
  limits stay with the referee (wall clock), ``cpu_seconds`` is a backstop.
* ``uid`` must be distinct per concurrent worker, non-zero, and used by
  nothing else; the group id is set to the same number.
"""

from __future__ import annotations

import ctypes
import os
import resource
from dataclasses import dataclass, field
from typing import Any

from .rlimits import _layer_rlimits, _lower_inherited
from .seccomp import (
    _CLONE_NEWNET,
    _CLONE_NEWUSER,
    _PR_GET_DUMPABLE,
    _PR_GET_NO_NEW_PRIVS,
    _PR_SET_DUMPABLE,
    _PR_SET_NO_NEW_PRIVS,
    SECCOMP_ALLOW,
    SECCOMP_KILL,
    Capabilities,
    PreparedFilter,
    Unavailable,
    _libc,
    errname,
    layer_seccomp,
    load_pyseccomp,
    prctl,
)

__all__ = [
    "HardenReport",
    "harden",
    "harden_template",
    "harden_child",
    "template_limits",
    "LAYERS",
    "SECCOMP_ALLOW",
    "SECCOMP_KILL",
    "PROBE_UID",
]

#: Layer names, in the order they are reported.
LAYERS: tuple[str, ...] = ("workdir", "rlimits", "netns", "uid", "no_new_privs", "seccomp")

#: The uid :func:`probe` drops to when run as root and not told otherwise ("nobody").
PROBE_UID = 65534

ACTIVE = "active"


@dataclass
class HardenReport:
    """What :func:`harden` achieved: layer name -> ``"active"``, ``"unavailable: why"`` or ``"failed: why"``."""

    layers: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # extra detail per layer, informational only
    #: What a template did toward the layers its game processes finish ("rlimits", "no_new_privs"):
    #: layer -> the problems met ("" for none). Not sent: the game process reports the whole layer.
    started: dict[str, str] = field(default_factory=dict)
    #: The template's capget buffers (made before any fork; the uid layer reads them back).
    caps: Capabilities | None = field(default=None, repr=False, compare=False)

    def active(self) -> list[str]:
        """The names of the layers in force."""
        return [name for name, state in self.layers.items() if state == ACTIVE]

    def missing(self, required: tuple[str, ...] | list[str] = LAYERS) -> list[str]:
        """The names among ``required`` that are not in force."""
        return [name for name in required if self.layers.get(name) != ACTIVE]

    def summary(self) -> str:
        """One line: how many layers are active, and why the others are not."""
        active = self.active()
        line = f"sandbox hardening {len(active)}/{len(self.layers)} active"
        if active:
            line += ": " + ", ".join(active)
        others = [f"{name} {state}" for name, state in self.layers.items() if state != ACTIVE]
        if others:
            line += "; " + "; ".join(others)
        return line.replace("\n", " ")

    def as_dict(self) -> dict[str, dict[str, str]]:
        """A JSON-ready form (for sending over the worker's pipe)."""
        return {"layers": dict(self.layers), "notes": dict(self.notes)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HardenReport:
        """The inverse of :meth:`as_dict`."""
        return cls(layers=dict(data.get("layers", {})), notes=dict(data.get("notes", {})))


def _open_fds() -> list[int]:
    """The file descriptors open in this process."""
    try:
        candidates = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        candidates = list(range(4096 if soft < 0 else min(soft, 4096)))
    fds = []
    for fd in candidates:
        try:
            os.fstat(fd)
        except OSError:
            continue
        fds.append(fd)
    return sorted(fds)


# --- the layers -------------------------------------------------------------------------------


def _mkdtemp(prefix: str) -> str:
    """A new private (0700) directory under $TMPDIR or /tmp, as tempfile.mkdtemp makes one.

    Not tempfile itself: it imports shutil, and so zlib, bz2 and lzma with their libraries,
    which would sit in every template (each mapped library makes every fork dearer)."""
    base = os.environ.get("TMPDIR") or "/tmp"
    for _ in range(100):
        path = os.path.join(os.path.abspath(base), prefix + os.urandom(6).hex())
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free name for a directory under {base}")


def _layer_workdir(workdir: str | None) -> str:
    """chdir into an empty directory nobody can write to; returns a note."""
    if workdir is None:
        path = _mkdtemp("arena-worker-")
        os.chdir(path)
        os.rmdir(path)  # the cwd is now a deleted directory: no entry can be created in it
        how = f"cwd is the removed empty directory {path}"
    else:
        path = os.path.abspath(workdir)
        os.makedirs(path, exist_ok=True)
        if os.listdir(path):
            raise RuntimeError(f"workdir {path} is not empty")
        os.chdir(path)
        os.chmod(path, 0o555)
        how = f"cwd is {path}, mode 0555"
    try:  # verify: creating a file in the cwd must fail (root passes mode bits, hence the note)
        fd = os.open("arena-probe", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return how
    os.close(fd)
    os.unlink("arena-probe")
    return how + "; still writable by this process until the uid is dropped"


def _layer_netns(network: bool, was_root: bool) -> str:
    """unshare(CLONE_NEWNET); returns a note."""
    if not network:
        raise Unavailable("disabled by caller (network=False)")

    def ns_id() -> str | None:
        try:
            return os.readlink("/proc/self/ns/net")
        except OSError:
            return None

    before = ns_id()
    libc = _libc()
    note = "new empty network namespace (loopback down)"
    if libc.unshare(_CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        reason = f"unshare(CLONE_NEWNET): {errname(err)}"
        if was_root:
            raise Unavailable(reason)
        if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
            err2 = ctypes.get_errno()
            raise Unavailable(f"{reason}; unshare(CLONE_NEWUSER|CLONE_NEWNET): {errname(err2)}")
        note += ", inside a new user namespace"
    after = ns_id()
    if before is not None and before == after:
        raise RuntimeError(f"network namespace unchanged ({after})")
    return note


def _layer_uid(uid: int | None, euid: int, caps: Capabilities | None = None) -> str:
    """Drop groups, gid and uid to ``uid`` (``euid``: the one harden() started with); returns a note."""
    if euid != 0:
        raise Unavailable(f"not running as root (euid {euid})")
    if uid is None:
        raise Unavailable("no uid given")
    if uid <= 0 or uid >= 2**32 - 1:
        raise RuntimeError(f"uid {uid} is not an unprivileged uid")
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid) or os.getgroups():
        raise RuntimeError(f"ids are {os.getresuid()}/{os.getresgid()}/{os.getgroups()}")
    # capget, not /proc/self/status: no file to open. The ambient set lies within the
    # permitted one (the kernel clears it with them), so empty permitted sets mean no ambient.
    for capfield, value in (caps or Capabilities()).read().items():
        if capfield != "CapInh" and value != 0:
            raise RuntimeError(f"{capfield} still {value:x}")
    try:
        os.setuid(0)
    except PermissionError:
        pass
    else:
        raise RuntimeError("could switch back to uid 0")
    return f"uid=gid={uid}, no supplementary groups, no capabilities"


def _set_no_new_privs() -> None:
    """PR_SET_NO_NEW_PRIVS and not dumpable (both inherited by fork)."""
    prctl(_PR_SET_NO_NEW_PRIVS, 1)
    prctl(_PR_SET_DUMPABLE, 0)


def _layer_no_new_privs(started: str | None = None) -> str:
    """PR_SET_NO_NEW_PRIVS and not dumpable (set here, or read back when the template set them:
    ``started`` its problems); returns a note."""
    if started is None:
        _set_no_new_privs()
    elif started:
        raise RuntimeError(started)
    if prctl(_PR_GET_NO_NEW_PRIVS) != 1:
        raise RuntimeError("PR_GET_NO_NEW_PRIVS does not read back 1")
    if prctl(_PR_GET_DUMPABLE) != 0:  # a uid change resets it to fs.suid_dumpable
        prctl(_PR_SET_DUMPABLE, 0)
        if prctl(_PR_GET_DUMPABLE) != 0:
            raise RuntimeError("PR_GET_DUMPABLE does not read back 0")
    return "no_new_privs=1 dumpable=0" + ("" if started is None else " (set in the template, read back)")


def _run_layers(report: HardenReport, steps: tuple[Any, ...]) -> None:
    for name, step in steps:
        try:
            report.notes[name] = step()
            report.layers[name] = ACTIVE
        except Unavailable as exc:
            report.layers[name] = f"unavailable: {exc}"
        except Exception as exc:  # noqa: BLE001 - every failure is reported, never raised
            report.layers[name] = f"failed: {type(exc).__name__}: {exc}"


def harden_template(*, workdir: str | None = None, network: bool = True) -> HardenReport:
    """The layers a template (zygote) process takes first, before it compiles the bot: workdir, netns.

    The template runs no bot code; its forked children inherit both layers and add the rest
    (:func:`template_limits` in the template, then :func:`harden_child`). The other layers read
    "failed: not attempted" until then.
    """
    report = HardenReport(layers={name: "failed: not attempted" for name in LAYERS})
    was_root = os.geteuid() == 0
    _libc()  # resolve the libc functions now, while files may still be opened
    report.caps = Capabilities()
    _run_layers(
        report, (("workdir", lambda: _layer_workdir(workdir)), ("netns", lambda: _layer_netns(network, was_root)))
    )
    return report


def template_limits(
    report: HardenReport, *, memory_bytes: int = 256 * 2**20, where: str = "in the template"
) -> HardenReport:
    """The inherited part of the rlimits and no_new_privs layers, taken in the template itself.

    RLIMIT_AS/FSIZE/CORE, no_new_privs and not dumpable bind the template too, which is
    harmless: it runs no bot code, writes no file and execs nothing. Whatever fails is kept in
    ``report.started`` and fails the layer in every game process (:func:`harden_child`)."""
    if memory_bytes <= 0:
        raise ValueError("memory_bytes must be positive")
    problems, set_to = _lower_inherited(memory_bytes)
    report.started["rlimits"] = "; ".join(problems)
    report.notes["rlimits"] = " ".join(set_to) + f" {where},"
    try:
        _set_no_new_privs()
        report.started["no_new_privs"] = ""
    except OSError as exc:
        report.started["no_new_privs"] = f"in the template: {exc}"
    return report


def harden_child(
    report: HardenReport,
    *,
    memory_bytes: int = 256 * 2**20,
    cpu_seconds: int = 60,
    uid: int | None = None,
    seccomp: bool = True,
    open_fds: list[int] | None = None,
    prepared: PreparedFilter | None = None,
    seccomp_missing: str = "",
) -> HardenReport:
    """The remaining layers (uid, rlimits, no_new_privs, seccomp), in a process that inherited
    the template's (``report``); returns a new report of all six. ``open_fds``: the
    descriptors this process holds (listed from /proc when not given); ``prepared``: the
    compiled seccomp filter (else it is compiled here, or, given ``seccomp_missing``, the
    layer is unavailable for that reason).
    """
    if memory_bytes <= 0 or cpu_seconds <= 0:
        raise ValueError("memory_bytes and cpu_seconds must be positive")
    out = HardenReport(layers=dict(report.layers), notes=dict(report.notes))
    euid = os.geteuid()
    fds = _open_fds() if open_fds is None else sorted(open_fds)
    started = report.started
    _run_layers(
        out,
        (
            ("uid", lambda: _layer_uid(uid, euid, report.caps)),
            ("rlimits", lambda: _layer_rlimits(memory_bytes, cpu_seconds, fds, started.get("rlimits"))),
            ("no_new_privs", lambda: _layer_no_new_privs(started.get("no_new_privs"))),
            ("seccomp", lambda: layer_seccomp(seccomp, prepared, seccomp_missing)),
        ),
    )
    if "rlimits" in started and out.layers["rlimits"] == ACTIVE:
        out.notes["rlimits"] = f"{report.notes.get('rlimits', '')} {out.notes['rlimits']}".strip()
    out.notes["open_fds"] = ",".join(map(str, fds))
    return out


def harden(
    *,
    memory_bytes: int = 256 * 2**20,
    cpu_seconds: int = 60,
    uid: int | None = None,
    workdir: str | None = None,
    network: bool = True,
    seccomp: bool = True,
) -> HardenReport:
    """Lock this (worker) process down, layer by layer, and report what is in force.

    Irreversible.  Call once, single-threaded, after every needed import and
    before loading bot code.  ``network=False`` / ``seccomp=False`` leave those
    layers out (reported as unavailable); ``uid`` applies only when root.
    The same as :func:`harden_template` then :func:`harden_child` in one process.
    """
    if memory_bytes <= 0 or cpu_seconds <= 0:
        raise ValueError("memory_bytes and cpu_seconds must be positive")
    open_fds = _open_fds()
    load_pyseccomp()  # while the Python installation is still readable
    report = harden_template(workdir=workdir, network=network)
    template_limits(report, memory_bytes=memory_bytes, where="first")
    return harden_child(
        report, memory_bytes=memory_bytes, cpu_seconds=cpu_seconds, uid=uid, seccomp=seccomp, open_fds=open_fds
    )
