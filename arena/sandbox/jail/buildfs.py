"""A build's folder, on the launcher's side: a tmpfs of its own, filled, then read back.

The launcher (:mod:`arena.sandbox.jail.launch`, build mode) mounts the folder as a tmpfs in the
build's own mount namespace, bounded in bytes (``size=``) and files (``nr_inodes=``), so a
build cannot fill the host's disk nor make more than its folder holds, even for a moment.
It writes the bot's files there (received on its stdin, never read from a host folder), owned
by the build's uid. When the build has ended, and with it every process of its PID namespace
(the launcher waits for the namespace's first process, which the kernel lets end only after
all the others), it reads the folder back beneath the folder's descriptor
(:func:`arena.trust.files.read_tree`: no link followed at any depth, regular files only, bounded
as it reads) and sends the files to the referee. Nothing of the build runs while it is read,
and nothing the build did can make the launcher open a file outside the folder.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

from ...trust.files import NotRegularFile, TooMuch, TreeLimits, read_tree

#: Folders a build may nest its files in, and entries it may list in all (links, folders, files).
DEPTH = 16
#: Bytes of input the launcher accepts on its stdin (a bot folder is at most 240 KiB).
MAX_INPUT = 16 * 2**20
#: What ``statvfs`` must still show free for a folder not to count as filled.
_SLACK_BYTES = 64 * 1024


def plain(name: Any) -> bool:
    """Whether ``name`` is a relative path of plain parts (no ``.``, ``..``, empty part, NUL)."""
    if type(name) is not str or not name or name.startswith("/") or "\0" in name:
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def read_input(fd: int) -> dict[str, bytes]:
    """The bot's files, as the referee wrote them (marshal) on ``fd`` and closed it."""
    import marshal

    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_INPUT:
            raise ValueError(f"more than {MAX_INPUT} bytes of input")
        chunks.append(chunk)
    files = marshal.loads(b"".join(chunks))
    if type(files) is not dict or not all(plain(k) and type(v) is bytes for k, v in files.items()):
        raise ValueError("the input is not a folder's files")
    return files


def populate(root: int, files: dict[str, bytes], uid: int | None) -> None:
    """Write ``files`` beneath the folder ``root`` (a descriptor), folders and files owned by
    ``uid`` (when given), never following a link (the folder is new and empty; this is only
    how every path here is used)."""
    for rel, data in sorted(files.items()):
        parts = rel.split("/")
        dfd = os.dup(root)
        try:
            for part in parts[:-1]:
                try:
                    os.mkdir(part, 0o755, dir_fd=dfd)
                    made = True
                except FileExistsError:
                    made = False
                sub = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
                os.close(dfd)
                dfd = sub
                if made and uid is not None:
                    os.fchown(dfd, uid, uid)
            fd = os.open(
                parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dfd
            )
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if uid is not None:
                    os.fchown(fd, uid, uid)
            finally:
                os.close(fd)
        finally:
            os.close(dfd)


def filled(fd: int) -> bool:
    """Whether the filesystem of ``fd`` is full, in bytes or in files (a build hit ENOSPC)."""
    info = os.fstatvfs(fd)
    return info.f_bavail * info.f_frsize < _SLACK_BYTES or info.f_favail == 0


def collect(root: int, files: int, size: int) -> dict[str, Any]:
    """The folder's regular files (links, FIFOs, sockets, devices passed over), at most ``files``
    of ``size`` bytes in all: ``{"files": [(path, bytes)...]}``, or ``{"over": what}``."""
    limits = TreeLimits(files=files, bytes=size, depth=DEPTH, entries=4 * files + 64)
    try:
        return {"files": read_tree(root, limits, others="skip")}
    except TooMuch as exc:
        return {"over": exc.what}
    except (NotRegularFile, OSError) as exc:
        code = getattr(exc, "errno", None)
        return {"error": f"cannot read the built folder: {errno.errorcode.get(code, '') if code else exc}"}


def mount_options(size: int, inodes: int, uid: int | None, mode: int) -> bytes:
    """tmpfs options for a folder of at most ``size`` bytes and ``inodes`` inodes, whose root
    belongs to ``uid`` (root's when None)."""
    owner = f",uid={uid},gid={uid}" if uid is not None else ""
    return f"size={max(size, 4096)},nr_inodes={max(inodes, 2)},mode={stat.S_IMODE(mode):o}{owner}".encode()
