"""Reading a file a contestant controls: a regular file or nothing, never blocking, never past a limit.

Bot files, submission manifests and the files of a submissions folder are named and
placed by contestants. Whatever sits at such a path, :func:`read_untrusted` is the one
road in, used by every reader of one (``arena play``, ``check``, ``submit``,
``tournament``, ``report``):

1. ``lstat`` the path and refuse anything but a regular file: a symbolic link (it would
   play a file nobody checked), a FIFO or a device (a read that blocks for ever, or
   never ends), a socket, a folder named ``x.py``; and, where ``single_link`` is asked
   (inside a submissions folder), a regular file with more than one name (a hard link);
2. open it with ``O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY``, so a
   symbolic link or FIFO swapped in after the ``lstat`` neither is followed nor blocks;
3. ``fstat`` the descriptor: it must still be the same regular file (``st_dev`` and
   ``st_ino`` of the ``lstat``), so a swap between check and open is refused;
4. read at most ``limit + 1`` bytes (the caller tells "too large" from the extra byte).

A refusal is :class:`NotRegularFile`, whose text is one line naming the path
(``submissions/x.py: a symbolic link, not a regular file``). Other failures (no such
file, no permission) are the ``OSError`` they are.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

from .text import storable

__all__ = ["NotRegularFile", "Untrusted", "kind_of", "read_untrusted", "regular"]

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
)

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


class NotRegularFile(Exception):
    """A contestant-controlled path that is not a regular file of its own (one line, path first)."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = storable(str(path))
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


@dataclass(frozen=True)
class Untrusted:
    """What was read: at most ``limit + 1`` bytes, and the file's size when opened."""

    data: bytes
    size: int
    limit: int

    @property
    def too_large(self) -> bool:
        return len(self.data) > self.limit or self.size > self.limit


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (``"a regular file"``, ``"a FIFO (named pipe)"``...)."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "not a file"


def _refusal(path: str | os.PathLike[str], info: os.stat_result, single_link: bool) -> NotRegularFile | None:
    if not stat.S_ISREG(info.st_mode):
        return NotRegularFile(path, f"{kind_of(info.st_mode)}, not a regular file")
    if single_link and info.st_nlink > 1:
        return NotRegularFile(path, f"a hard link ({info.st_nlink} names for one file), not a regular file of its own")
    return None


def regular(path: str | os.PathLike[str], *, single_link: bool = False) -> os.stat_result:
    """The ``lstat`` of ``path`` when it is a regular file (of its own, with ``single_link``).

    :raises NotRegularFile: anything else. :raises OSError: missing, no permission.
    """
    info = os.lstat(path)
    refused = _refusal(path, info, single_link)
    if refused:
        raise refused
    return info


def read_untrusted(path: str | os.PathLike[str], limit: int, *, single_link: bool = False) -> Untrusted:
    """The bytes of the regular file at ``path`` (at most ``limit + 1``), read as described above.

    :raises NotRegularFile: a symbolic link, FIFO, socket, device or folder; a hard link when
        ``single_link``; a file swapped between the checks and the read.
    :raises OSError: missing, no permission, a read error.
    """
    before = regular(path, single_link=single_link)
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # a symbolic link swapped in after the lstat
            raise NotRegularFile(path, "a symbolic link, not a regular file") from None
        raise
    try:
        now = os.fstat(fd)
        refused = _refusal(path, now, single_link)
        if refused:
            raise refused
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise NotRegularFile(path, "replaced by another file while it was being read")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return Untrusted(b"".join(chunks), now.st_size, limit)
    finally:
        os.close(fd)
