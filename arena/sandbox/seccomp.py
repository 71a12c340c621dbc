"""The seccomp layer of the sandbox worker, and the libc calls the hardening layers share.

:func:`build_filter` makes the syscall allowlist (pyseccomp, i.e. libseccomp).
Compiling it costs about a millisecond, so a template process (see
:mod:`arena.sandbox.zygote`) compiles it once with a placeholder for the
process id (:class:`PreparedFilter`); each forked game process patches in its
own pid (the only value that differs) and loads the BPF program with one
``prctl`` call.
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
    return libc


def prctl(option: int, arg: int = 0) -> int:
    """prctl(option, arg, 0, 0, 0); raises OSError on failure."""
    res = _libc().prctl(option, arg, 0, 0, 0)
    if res < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}): {os.strerror(err)}")
    return int(res)


def errname(err: int) -> str:
    return f"{errno.errorcode.get(err, err)} ({os.strerror(err)})"


def _load_pyseccomp() -> tuple[ModuleType | None, str]:
    """Import pyseccomp (it loads libseccomp); (module, "") or (None, reason)."""
    try:
        import pyseccomp  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        return None, f"pyseccomp not installed ({exc})"
    except (RuntimeError, OSError) as exc:  # raised when libseccomp.so is missing
        return None, f"libseccomp not loadable ({exc})"
    return pyseccomp, ""


# Imported now, with this module: by the time harden() runs, the worker may no longer
# be able to read the Python installation (a dropped uid cannot read /root/...).
_PYSECCOMP, _PYSECCOMP_MISSING = _load_pyseccomp()


def build_filter(sc: ModuleType, pid: int) -> Any:
    """The seccomp filter: default EPERM, :data:`SECCOMP_ALLOW`, :data:`SECCOMP_KILL`, conditionals."""
    flt = sc.SyscallFilter(sc.ERRNO(errno.EPERM))
    flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    flt.set_attr(sc.Attr.CTL_NNP, 1)

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
    """The compiled allowlist with a placeholder pid: :meth:`load` it in any process (cheap)."""

    def __init__(self, program: bytes) -> None:
        self.program = program
        self.slots = [
            i
            for i in range(0, len(program), _INSN.size)
            if _INSN.unpack_from(program, i)[0] == _BPF_JEQ_K and _INSN.unpack_from(program, i)[3] == _PID_PLACEHOLDER
        ]
        if not self.slots or len(program) % _INSN.size:
            raise ValueError("the placeholder pid is not in the compiled filter")

    @classmethod
    def build(cls, sc: ModuleType) -> PreparedFilter:
        """Compile the filter once (call before files can no longer be made)."""
        flt = build_filter(sc, _PID_PLACEHOLDER)
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
        return cls(b"".join(chunks))

    def load(self) -> None:
        """Install the filter, for this process's own pid (no_new_privs must be set)."""
        program = bytearray(self.program)
        pid = os.getpid()
        for i in self.slots:
            code, jt, jf, _ = _INSN.unpack_from(program, i)
            _INSN.pack_into(program, i, code, jt, jf, pid)
        buf = (ctypes.c_char * len(program)).from_buffer(program)
        prog = _SockFprog(len(program) // _INSN.size, ctypes.addressof(buf))
        if _libc().prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_SECCOMP): {os.strerror(err)}")


def prepare(enabled: bool = True) -> PreparedFilter | None:
    """A :class:`PreparedFilter`, or None (no pyseccomp, or export failed: build per process then)."""
    if not enabled or _PYSECCOMP is None:
        return None
    try:
        return PreparedFilter.build(_PYSECCOMP)
    except (OSError, ValueError, RuntimeError, AttributeError):
        return None


def layer_seccomp(enabled: bool, prepared: PreparedFilter | None = None) -> str:
    """Load the allowlist filter (prepared, or built now); returns a note, raises :class:`Unavailable`."""
    if not enabled:
        raise Unavailable("disabled by caller (seccomp=False)")
    how = "allowlist loaded: default EPERM, fork/exec/ptrace/foreign signals etc. kill (SIGSYS)"
    if prepared is not None:
        try:
            prepared.load()
        except OSError as exc:
            raise Unavailable(f"prctl(PR_SET_SECCOMP): {errname(exc.errno or 0)}") from exc
        how += "; prepared in the template"
    else:
        if _PYSECCOMP is None:
            raise Unavailable(_PYSECCOMP_MISSING)
        flt = build_filter(_PYSECCOMP, os.getpid())
        try:
            flt.load()
        except OSError as exc:
            raise Unavailable(f"seccomp_load: {errname(exc.errno or 0)}") from exc
    mode = prctl(_PR_GET_SECCOMP)
    if mode != _SECCOMP_MODE_FILTER:
        raise RuntimeError(f"PR_GET_SECCOMP reads {mode}")
    return how
