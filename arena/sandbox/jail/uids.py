"""The uids bots run under: allocated, never derived from a pid, never reused while held.

Every process that runs a contestant's code (a Python bot's game process, a program, a build)
gets an unprivileged uid of its own, so that no two bots share one: a shared uid would let one
signal the other, read its ``/proc``, or count against its RLIMIT_NPROC. A uid was once
``UID_BASE + pid``; a process that outlived its supervision then shared its uid with a later
bot once pids wrapped. Now a uid is *leased*: :func:`allocate` takes an exclusive ``flock`` on
the lock file ``LOCKS/<uid>`` in a root-only folder, and the uid is the lessee's until every
descriptor of that lock is closed. The lock is held by whoever outlives every process of the
uid (the template that reaps a game process; the launcher, which leaves its PID namespace
last, and the referee until it has reaped the launcher), so a uid returns to the pool only when
nothing runs under it. ``flock`` works across unrelated processes (tournament workers, server
workers, a second ``arena check`` in another shell), and the kernel drops a lock whose holder
died, so nothing leaks past a crash.

Only a root referee drops uids; :func:`allocate` is for it (it raises :class:`OSError` when
the folder cannot be made or trusted, or every uid is taken).
"""

from __future__ import annotations

import fcntl
import os
import stat

#: The first uid a bot may get, and how many there are: ``UID_BASE`` to ``UID_BASE + UID_COUNT - 1``.
#: Far from the uids a machine hands out itself (users, systemd's dynamic users and container
#: ranges below 1879048192, the subordinate uids of /etc/subuid, usually from 100000) and from
#: the old ``100000 + pid``, which an older arena on the same machine may still use.
UID_BASE = 1_900_000_000
UID_COUNT = 1 << 16
#: The folder of the lock files: root's, mode 0700 (made on first use).
LOCKS = "/run/arena-uids"

_OPEN = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_folders: dict[tuple[str, int], int] = {}


class UidLease:
    """A uid and the locked descriptor that holds it: the uid is free again once every copy
    of ``fd`` is closed (this one by :meth:`close`; those inherited by other processes when
    they exit)."""

    __slots__ = ("uid", "fd")

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self.fd = fd

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __repr__(self) -> str:
        return f"UidLease(uid={self.uid}, fd={self.fd})"


def _folder(path: str) -> int:
    """A descriptor of the lock folder, checked to be root's own and closed to others (one per
    process and path: a forked child opens its own)."""
    key = (path, os.getpid())
    fd = _folders.get(key)
    if fd is not None:
        return fd
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    info = os.fstat(fd)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o077:
        os.close(fd)
        raise PermissionError(
            f"{path}: not a folder of root's own, mode 0700 (uid {info.st_uid}, mode {info.st_mode:o})"
        )
    _folders[key] = fd
    return fd


def allocate(folder: str = LOCKS, base: int = UID_BASE, count: int = UID_COUNT) -> UidLease:
    """Lease a uid no other live process holds, starting from a random one.

    :raises OSError: the folder cannot be made or is not root's, or all ``count`` are taken."""
    dfd = _folder(folder)
    start = int.from_bytes(os.urandom(4), "little") % count
    for i in range(count):
        uid = base + (start + i) % count
        fd = os.open(str(uid), _OPEN, 0o600, dir_fd=dfd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        return UidLease(uid, fd)
    raise OSError(f"every uid from {base} to {base + count - 1} is in use")
