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

A *folder* a contestant controls (a bot program's folder, what a build left) is read by
:func:`read_tree`, which never resolves a path: every entry is opened by its one name beneath
the descriptor of the folder that lists it, with ``O_NOFOLLOW`` (no link followed at any
depth), ``fstat`` on the descriptor decides what it is, and the counts (entries, files, bytes,
depth) are checked as it goes, never after.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from typing import Any

from .text import storable

__all__ = ["NotRegularFile", "TreeLimits", "TooMuch", "Untrusted", "kind_of", "read_tree", "read_untrusted", "regular"]

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


@dataclass(frozen=True)
class TreeLimits:
    """What :func:`read_tree` reads at most: regular files, their bytes in all, folders deep, and
    entries listed in all (whatever they are: what bounds the work on a folder of links)."""

    files: int
    bytes: int
    depth: int
    entries: int


class TooMuch(Exception):
    """A folder over one of its :class:`TreeLimits`: ``what`` names which (``"files"``,
    ``"bytes"``, ``"depth"``, ``"entries"``); the text says it and the limit in one line."""

    def __init__(self, what: str, limit: int) -> None:
        self.what = what
        self.limit = limit
        words = {"depth": f"folders nested deeper than {limit}", "bytes": f"more than {limit} bytes"}
        super().__init__(words.get(what, f"more than {limit} {what}"))


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def read_tree(
    root: int, limits: TreeLimits, *, others: str = "skip", skip_hidden: bool = False, single_link: bool = False
) -> list[tuple[str, bytes]]:
    """The regular files beneath the folder open as ``root`` (a descriptor): ``(relative path,
    bytes)``, sorted, read as the module's docstring says.

    ``others`` is ``"skip"`` (links, FIFOs, sockets, devices are passed over) or ``"refuse"``
    (:class:`NotRegularFile` naming the first); ``skip_hidden`` passes over names starting
    with ``.``; ``single_link`` refuses a file with more than one name (a hard link).

    :raises TooMuch: over ``limits``. :raises NotRegularFile: see ``others``. :raises OSError:
        unreadable."""
    found: list[tuple[str, bytes]] = []
    counts = {"entries": 0, "bytes": 0}

    def visit(dfd: int, rel: str, depth: int) -> None:
        if depth > limits.depth:
            raise TooMuch("depth", limits.depth)
        names: list[str] = []
        with os.scandir(dfd) as entries:
            for entry in entries:
                counts["entries"] += 1
                if counts["entries"] > limits.entries:
                    raise TooMuch("entries", limits.entries)
                names.append(entry.name)
        for name in sorted(names):
            if skip_hidden and name.startswith("."):
                continue
            path = f"{rel}{name}"
            info = os.stat(name, dir_fd=dfd, follow_symlinks=False)  # one name: nothing resolved
            if stat.S_ISDIR(info.st_mode):
                try:
                    sub = os.open(name, _DIR_FLAGS, dir_fd=dfd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # swapped for a link or a file
                        _other(
                            path, "a symbolic link, not a regular file" if exc.errno == errno.ELOOP else "not a folder"
                        )
                        continue
                    raise
                try:
                    now = os.fstat(sub)
                    if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
                        _other(path, "replaced by another file while it was being read")
                        continue
                    visit(sub, path + "/", depth + 1)
                finally:
                    os.close(sub)
                continue
            if not stat.S_ISREG(info.st_mode):
                _other(path, f"{kind_of(info.st_mode)}, not a regular file")
                continue
            if len(found) >= limits.files:
                raise TooMuch("files", limits.files)
            room = limits.bytes - counts["bytes"]
            data = _read_beneath(dfd, name, path, info, room, single_link, _other, limits.bytes)
            if data is None:
                continue
            counts["bytes"] += len(data)
            found.append((path, data))

    def _other(path: str, reason: str) -> None:
        if others == "refuse":
            raise NotRegularFile(path, reason)

    visit(root, "", 0)
    return sorted(found)


def _read_beneath(
    dfd: int, name: str, path: str, before: os.stat_result, room: int, single_link: bool, other: Any, bound: int
) -> bytes | None:
    """The bytes of regular file ``name`` in folder ``dfd`` (None when ``other`` passed it over),
    never waiting on it; more than ``room`` is :class:`TooMuch` (``bytes``, ``bound``), seen from
    its size before it is read and counted while it is."""
    try:
        fd = os.open(name, _FLAGS, dir_fd=dfd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):  # a link or a socket swapped in
            other(path, "replaced by another file while it was being read")
            return None
        raise
    try:
        now = os.fstat(fd)
        refused = _refusal(path, now, single_link)
        if refused is not None or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            other(path, refused.reason if refused else "replaced by another file while it was being read")
            return None
        if now.st_size > room:
            raise TooMuch("bytes", bound)
        chunks: list[bytes] = []
        left = room + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:  # it grew past the bound while it was read
            raise TooMuch("bytes", bound)
        return b"".join(chunks)
    finally:
        os.close(fd)
