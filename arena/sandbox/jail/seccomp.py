"""The seccomp layer of the sandbox worker, and the libc calls the hardening layers share.

:func:`build_filter` makes the syscall allowlist (pyseccomp, i.e. libseccomp).
Compiling it costs about a millisecond, and pyseccomp pulls ``ctypes.util``,
``subprocess`` and ``threading`` into the process (each module a template holds
makes every fork dearer), so the referee compiles it once per process with a
placeholder for the process id (:func:`export_program`) and sends the BPF
program to each bot's template (:mod:`arena.sandbox.python.zygote`), which never
imports pyseccomp. Each forked game process patches in its own pid (the only
value that differs) and loads the program with one ``prctl`` call
(:class:`PreparedFilter`: the buffer is made in the template).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import struct
from types import ModuleType
from typing import Any

# Linux constants (stable ABI, same on every architecture).
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4
_PR_GET_SECCOMP = 21
_PR_SET_NO_NEW_PRIVS = 38
_PR_GET_NO_NEW_PRIVS = 39
_SECCOMP_MODE_FILTER = 2
_AT_EMPTY_PATH = 0x1000
_U32 = 0xFFFFFFFF

#: Syscalls the hardened worker may make freely: I/O on descriptors it already
#: holds, memory management, time, randomness, signals to itself, queries.
SECCOMP_ALLOW: tuple[str, ...] = (
    # I/O on already open descriptors (the pipes to the referee)
    "read",
    "readv",
    "pread64",
    "preadv",
    "preadv2",
    "write",
    "writev",
    "close",
    "close_range",
    "dup",
    "dup2",
    "dup3",
    "lseek",
    "fstat",
    "select",
    "pselect6",
    "poll",
    "ppoll",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    # memory
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    # synchronisation, time, timers, randomness
    "futex",
    "sched_yield",
    "clock_gettime",
    "clock_getres",
    "clock_nanosleep",
    "nanosleep",
    "gettimeofday",
    "time",
    "getitimer",
    "setitimer",
    "alarm",
    "getrandom",
    # signal handling (sending signals: see the conditional rules)
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigpending",
    "rt_sigsuspend",
    "rt_sigtimedwait",
    "sigaltstack",
    "restart_syscall",
    "pause",
    # harmless queries about the process itself
    "getpid",
    "gettid",
    "getppid",
    "getpgrp",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getgroups",
    "getrusage",
    "times",
    "getrlimit",
    "getcwd",
    "sched_getaffinity",
    # the end
    "exit",
    "exit_group",
)

#: Syscalls that kill the worker at once (SIGSYS): attempts to escape or to reach other processes.
SECCOMP_KILL: tuple[str, ...] = (
    "fork",
    "vfork",
    "clone",
    "clone3",
    "execve",
    "execveat",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "kcmp",
    "pidfd_open",
    "pidfd_getfd",
    "pidfd_send_signal",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "mount_setattr",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fspick",
    "open_by_handle_at",
    "name_to_handle_at",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "iopl",
    "ioperm",
    "modify_ldt",
    "personality",
    "uselib",
    "quotactl",
    "acct",
    "syslog",
    "vhangup",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
)

# Conditionally allowed: syscall -> (argument index, allowed values); masked to 32 bits.
_ALLOW_IF: dict[str, tuple[int, tuple[int, ...]]] = {
    # isatty (TCGETS), FIONREAD, FIONBIO, FIOCLEX, FIONCLEX; never TIOCSTI and friends
    "ioctl": (1, (0x5401, 0x541B, 0x5421, 0x5451, 0x5450)),
    # F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC
    "fcntl": (1, (0, 1, 2, 3, 4, 1030)),
    # PR_GET_DUMPABLE, PR_GET_SECCOMP, PR_GET_NO_NEW_PRIVS (read-only queries)
    "prctl": (0, (_PR_GET_DUMPABLE, _PR_GET_SECCOMP, _PR_GET_NO_NEW_PRIVS)),
}


class Unavailable(Exception):
    """A layer this machine or this call cannot provide."""


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    """The C library already loaded into the interpreter, with errno capture."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.unshare.argtypes = [ctypes.c_int]
    libc.unshare.restype = ctypes.c_int
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    libc.prctl.restype = ctypes.c_int
    libc.capget.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    libc.capget.restype = ctypes.c_int
    return libc


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class Capabilities:
    """capget(2) of this process, with its buffers made once (in the template, before any fork)."""

    def __init__(self) -> None:
        self.header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
        self.data = (_CapData * 2)()
        self.args = (ctypes.addressof(self.header), ctypes.addressof(self.data))
        self.read()  # resolve the call now

    def read(self) -> dict[str, int]:
        """The effective, permitted and inheritable sets (64-bit masks); raises OSError."""
        self.header.version = _LINUX_CAPABILITY_VERSION_3
        if _libc().capget(*self.args) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"capget: {os.strerror(err)}")
        lo, hi = self.data
        return {
            "CapEff": lo.effective | hi.effective << 32,
            "CapPrm": lo.permitted | hi.permitted << 32,
            "CapInh": lo.inheritable | hi.inheritable << 32,
        }


def prctl(option: int, arg: int = 0) -> int:
    """prctl(option, arg, 0, 0, 0); raises OSError on failure."""
    res = _libc().prctl(option, arg, 0, 0, 0)
    if res < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}): {os.strerror(err)}")
    return int(res)


def errname(err: int) -> str:
    return f"{errno.errorcode.get(err, err)} ({os.strerror(err)})"


@functools.lru_cache(maxsize=1)
def load_pyseccomp() -> tuple[ModuleType | None, str]:
    """Import pyseccomp (it loads libseccomp); (module, "") or (None, reason).

    Call before files can no longer be opened (a dropped uid may not read the
    Python installation); a template process never calls it."""
    try:
        import pyseccomp  # noqa: PLC0415 - optional dependency, and kept out of templates
    except ImportError as exc:
        return None, f"pyseccomp not installed ({exc})"
    except (RuntimeError, OSError) as exc:  # raised when libseccomp.so is missing
        return None, f"libseccomp not loadable ({exc})"
    return pyseccomp, ""


def build_filter(sc: ModuleType, pid: int) -> Any:
    """The seccomp filter: default EPERM, :data:`SECCOMP_ALLOW`, :data:`SECCOMP_KILL`, conditionals."""
    flt = sc.SyscallFilter(sc.ERRNO(errno.EPERM))
    flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    flt.set_attr(sc.Attr.CTL_NNP, 1)
    try:  # a binary tree of syscall numbers (libseccomp >= 2.5): the same rules, fewer
        # comparisons per syscall, and a cheaper load (the kernel emulates the program for
        # every syscall number to cache the ones always allowed)
        flt.set_attr(sc.Attr.CTL_OPTIMIZE, 2)
    except (OSError, AttributeError, ValueError, RuntimeError):
        pass

    def known(name: str) -> bool:
        return bool(sc.resolve_syscall(sc.Arch.NATIVE, name) != -1)

    for name in SECCOMP_ALLOW:
        if known(name):
            flt.add_rule(sc.ALLOW, name)
    for name in SECCOMP_KILL:
        if known(name):
            flt.add_rule(sc.KILL_PROCESS, name)
    for name, (arg, values) in _ALLOW_IF.items():
        for value in values:
            flt.add_rule(sc.ALLOW, name, sc.Arg(arg, sc.MASKED_EQ, _U32, value))
    # fstat as glibc does it: newfstatat(fd, "", ..., AT_EMPTY_PATH)
    if known("newfstatat"):
        flt.add_rule(sc.ALLOW, "newfstatat", sc.Arg(3, sc.MASKED_EQ, _AT_EMPTY_PATH, _AT_EMPTY_PATH))
    # reading its own limits: prlimit64(0, resource, NULL, old)
    flt.add_rule(sc.ALLOW, "prlimit64", sc.Arg(0, sc.EQ, 0), sc.Arg(2, sc.EQ, 0))
    # signals: to itself only (raise, abort); anything else is an attack
    for name in ("kill", "tkill", "tgkill"):
        flt.add_rule(sc.ALLOW, name, sc.Arg(0, sc.EQ, pid))
        flt.add_rule(sc.KILL_PROCESS, name, sc.Arg(0, sc.NE, pid))
    return flt


#: Stands for the process id in a prepared filter (above any pid Linux hands out: pid_max <= 2**22).
_PID_PLACEHOLDER = 0x2E5EC0DE
_BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K: the comparisons libseccomp emits for argument values
_PR_SET_SECCOMP = 22
_INSN = struct.Struct("=HBBI")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class PreparedFilter:
    """The compiled allowlist with a placeholder pid: :meth:`load` it in any process (cheap).

    Made in the template: the program's buffer, the ``sock_fprog`` pointing at it and the
    offsets of the pid slots are ready before any fork; a game process writes its pid into
    its (copy-on-write) copy of the buffer and makes one ``prctl`` call."""

    def __init__(self, program: bytes) -> None:
        if type(program) is not bytes or not program or len(program) % _INSN.size:
            raise ValueError("not a BPF program")
        self.program = program
        self.slots = [
            i
            for i in range(0, len(program), _INSN.size)
            if _INSN.unpack_from(program, i)[0] == _BPF_JEQ_K and _INSN.unpack_from(program, i)[3] == _PID_PLACEHOLDER
        ]
        if not self.slots:
            raise ValueError("the placeholder pid is not in the compiled filter")
        self.buffer = ctypes.create_string_buffer(program, len(program))
        self.fprog = _SockFprog(len(program) // _INSN.size, ctypes.addressof(self.buffer))
        self.address = ctypes.addressof(self.fprog)
        self.offsets = [i + 4 for i in self.slots]  # the k field of each comparison with the pid
        _PID.pack_into(self.buffer, 4, _INSN.unpack_from(program, 0)[3])  # warm the writer (no change)
        prctl(_PR_GET_SECCOMP)  # and the call

    @classmethod
    def build(cls, sc: ModuleType) -> PreparedFilter:
        """Compile the filter once (call before files can no longer be made)."""
        return cls(_export(build_filter(sc, _PID_PLACEHOLDER)))

    def load(self) -> None:
        """Install the filter, for this process's own pid (no_new_privs must be set)."""
        pid = os.getpid()
        buffer, pack = self.buffer, _PID.pack_into
        for offset in self.offsets:
            pack(buffer, offset, pid)
        if _libc().prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, self.address, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_SECCOMP): {os.strerror(err)}")


_PID = struct.Struct("=I")


def _export(flt: Any) -> bytes:
    """A libseccomp filter's BPF program, through a pipe (export_bpf writes to a descriptor)."""
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb", closefd=True) as out:  # 1.5 KB: fits the pipe's buffer
            flt.export_bpf(out)
        chunks = []
        while True:
            data = os.read(read, 65536)
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(read)
    return b"".join(chunks)


@functools.lru_cache(maxsize=1)
def export_program() -> tuple[bytes | None, str]:
    """The allowlist as a BPF program with the placeholder pid, for templates: (program, "")
    or (None, why not). Compiled once per (referee) process."""
    sc, missing = load_pyseccomp()
    if sc is None:
        return None, missing
    try:
        program = _export(build_filter(sc, _PID_PLACEHOLDER))
        PreparedFilter(program)  # the placeholder is where it must be
    except (OSError, ValueError, RuntimeError, AttributeError) as exc:
        return None, f"exporting the filter failed ({type(exc).__name__}: {exc})"
    return program, ""


def prepare(enabled: bool = True) -> PreparedFilter | None:
    """A :class:`PreparedFilter` built in this process, or None (disabled, no pyseccomp, export failed)."""
    if not enabled:
        return None
    program, _ = export_program()
    return PreparedFilter(program) if program is not None else None


def layer_seccomp(enabled: bool, prepared: PreparedFilter | None = None, missing: str = "") -> str:
    """Load the allowlist filter (prepared, or built now); returns a note, raises :class:`Unavailable`.

    ``missing``: why there is no prepared filter (a template's: it cannot build one itself)."""
    if not enabled:
        raise Unavailable("disabled by caller (seccomp=False)")
    how = "allowlist loaded: default EPERM, fork/exec/ptrace/foreign signals etc. kill (SIGSYS)"
    if prepared is not None:
        try:
            prepared.load()
        except OSError as exc:
            raise Unavailable(f"prctl(PR_SET_SECCOMP): {errname(exc.errno or 0)}") from exc
        how += "; compiled by the referee, loaded with one prctl"
    else:
        if missing:
            raise Unavailable(missing)
        sc, why = load_pyseccomp()
        if sc is None:
            raise Unavailable(why)
        flt = build_filter(sc, os.getpid())
        try:
            flt.load()
        except OSError as exc:
            raise Unavailable(f"seccomp_load: {errname(exc.errno or 0)}") from exc
    mode = prctl(_PR_GET_SECCOMP)
    if mode != _SECCOMP_MODE_FILTER:
        raise RuntimeError(f"PR_GET_SECCOMP reads {mode}")
    return how
