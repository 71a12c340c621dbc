"""The seccomp allowlist of a bot program (node, a compiled binary, an interpreter over stdio).

A runtime needs more than the Python game process (:data:`.seccomp.SECCOMP_ALLOW`): node
starts threads, opens its own libraries and ICU data, sizes its heap from ``sysinfo``. The
extra set below is the union of what node 20, a g++ program and python3 make while playing,
read from ``strace -f`` of each; under this filter each plays (tests/sandbox/programs/test_programs.py). What stays out:

* **files opened for writing**: ``open``/``openat`` are allowed only when the flags hold
  none of ``O_WRONLY``, ``O_RDWR``, ``O_CREAT``, ``O_TRUNC``, ``O_APPEND`` (else EPERM);
  ``openat2``, ``creat``, ``mkdir``, ``unlink``, ``rename``, ``link``, ``chmod``... EPERM;
  and RLIMIT_FSIZE is 0 besides;
* **new processes**: ``clone`` only with ``CLONE_THREAD`` (a thread) and no namespace flag;
  any other clone, and ``fork``/``vfork``, kill the program (SIGSYS), so a program is one
  process (its CPU clock counts all of it, SIGSTOP stops all of it). ``clone3`` (whose flags
  a filter cannot read) fails with ENOSYS, so the C library falls back to ``clone``;
* **process groups and sessions**: ``setpgid``, ``setsid`` EPERM;
* **the network**: ``socket`` and friends EPERM (and the namespace is empty anyway);
* signals to anything but the program itself kill it; ptrace, mount, bpf... kill it.

``execve`` is allowed (the launcher execs the program under the filter): a program may
replace itself by another one, which stays under every layer.
"""

from __future__ import annotations

import errno
import functools
from types import ModuleType
from typing import Any

from .seccomp import (
    _ALLOW_IF,
    _PID_PLACEHOLDER,
    _U32,
    SECCOMP_ALLOW,
    SECCOMP_KILL,
    PreparedFilter,
    _export,
    load_pyseccomp,
)

#: Beyond the Python game process's allowlist: what node 20 (a protocol bot and the 2012 shim with
#: MooTools), a g++ -O2 program and python3 -I make while playing, read from ``strace -f`` of each
#: (benchmarks/programs.py's bots); anything else is EPERM (or a kill, above).
PROGRAM_EXTRA: tuple[str, ...] = (
    "access",
    "faccessat2",
    "arch_prctl",
    "capget",
    "eventfd2",
    "pipe2",
    "pkey_alloc",
    "readlink",
    "rseq",
    "set_robust_list",
    "set_tid_address",
    "statx",
    "newfstatat",
    "sysinfo",
    "uname",
    "getdents64",
    "execve",
)

_CLONE_THREAD = 0x10000
#: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: a clone with any makes namespaces.
_CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000  # O_WRONLY O_RDWR O_CREAT O_TRUNC O_APPEND
_KILLED_HERE = frozenset({"clone", "clone3", "execve"})


def build_program_filter(sc: ModuleType, pid: int, *, build: bool = False) -> Any:
    """The program filter for the process ``pid`` (the launcher's, kept by the exec).

    ``build``: the filter of a build command (a compiler driver forks and execs its passes,
    writes its output and sends its children signals): new processes (``clone`` without a
    namespace flag), opens for writing and signals are allowed (within its own uid, its own PID
    namespace, its folder, its private /tmp and RLIMIT_FSIZE); the network, ptrace, mounts,
    namespaces, ``setpgid`` and ``setsid`` (a process group or session of its own: needless,
    and the way out of the group its referee killed before builds had a namespace) still are not."""
    flt = sc.SyscallFilter(sc.ERRNO(errno.EPERM))
    flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    flt.set_attr(sc.Attr.CTL_NNP, 1)

    def known(name: str) -> bool:
        return bool(sc.resolve_syscall(sc.Arch.NATIVE, name) != -1)

    for name in dict.fromkeys(SECCOMP_ALLOW + PROGRAM_EXTRA):
        if known(name):
            flt.add_rule(sc.ALLOW, name)
    freed = _KILLED_HERE | ({"fork", "vfork"} if build else set())
    for name in SECCOMP_KILL:
        if known(name) and name not in freed:
            flt.add_rule(sc.KILL_PROCESS, name)
    if build:
        for name in (
            "fork",
            "vfork",
            "wait4",
            "waitid",
            "kill",
            "tgkill",
            "tkill",
            "unlink",
            "unlinkat",
            "rename",
            "renameat",
            "renameat2",
            "mkdir",
            "mkdirat",
            "rmdir",
            "chmod",
            "fchmod",
            "fchmodat",
            "openat",
            "open",
            "creat",
            "ftruncate",
            "fsync",
            "fdatasync",
            "getpgid",
            "umask",
            "utimensat",
            "dup2",
            "fchown",
            "chdir",
            "fchdir",
            "lseek",
            "fadvise64",
            "copy_file_range",
            "sendfile",
            "pipe2",
            "prctl",
            "ioctl",
            "fcntl",
            "link",
            "linkat",
            "symlink",
            "symlinkat",
            "fallocate",
        ):
            if known(name):
                flt.add_rule(sc.ALLOW, name)
        flt.add_rule(sc.ALLOW, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_NAMESPACES, 0))
        flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        flt.add_rule(sc.ALLOW, "prlimit64", sc.Arg(0, sc.EQ, 0), sc.Arg(2, sc.EQ, 0))
        return flt
    for name, (arg, values) in _ALLOW_IF.items():
        for value in values:
            flt.add_rule(sc.ALLOW, name, sc.Arg(arg, sc.MASKED_EQ, _U32, value))
    flt.add_rule(sc.ALLOW, "fcntl", sc.Arg(1, sc.MASKED_EQ, _U32, 1032))  # F_GETPIPE_SZ
    flt.add_rule(sc.ALLOW, "prctl", sc.Arg(0, sc.EQ, 15))  # PR_SET_NAME (thread names)
    flt.add_rule(sc.ALLOW, "prctl", sc.Arg(0, sc.EQ, 16))  # PR_GET_NAME
    flt.add_rule(sc.ALLOW, "openat", sc.Arg(2, sc.MASKED_EQ, _WRITE_FLAGS, 0))
    if known("open"):
        flt.add_rule(sc.ALLOW, "open", sc.Arg(1, sc.MASKED_EQ, _WRITE_FLAGS, 0))
    flt.add_rule(sc.ALLOW, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD | _CLONE_NAMESPACES, _CLONE_THREAD))
    flt.add_rule(sc.KILL_PROCESS, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, 0))
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    flt.add_rule(sc.ALLOW, "prlimit64", sc.Arg(0, sc.EQ, 0), sc.Arg(2, sc.EQ, 0))
    for name in ("kill", "tkill", "tgkill"):
        flt.add_rule(sc.ALLOW, name, sc.Arg(0, sc.EQ, pid))
        flt.add_rule(sc.KILL_PROCESS, name, sc.Arg(0, sc.NE, pid))
    return flt


@functools.lru_cache(maxsize=1)
def export_program_filter() -> tuple[bytes | None, str]:
    """The program filter compiled once per referee process, with the placeholder pid (the
    launcher patches in its own and loads it with one prctl, never importing pyseccomp):
    (BPF program, "") or (None, why not)."""
    sc, missing = load_pyseccomp()
    if sc is None:
        return None, missing
    try:
        program = _export(build_program_filter(sc, _PID_PLACEHOLDER))
        PreparedFilter(program)  # the placeholder is where it must be
    except (OSError, ValueError, RuntimeError, AttributeError) as exc:
        return None, f"exporting the filter failed ({type(exc).__name__}: {exc})"
    return program, ""
