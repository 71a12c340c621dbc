"""A build's output kept by the sha256 of what made it: built once, read back checked.

A build's *key* (:func:`build_key`) is the sha256 of the bot's bundle (its files as stored and
hashed), its build command and its :class:`~.build.BuildLimits`, the only inputs of
:func:`~.build.run_build` (which keeps no state): the same key, the same build.

:class:`BuildCache` keeps builds in a folder (a contest's ``builds/``, ``arena tournament
--build-cache DIR``), content-addressed: an *entry* (:func:`encode`: the key it was built for, then
each built file's name and bytes) is the file ``objects/DIGEST``, DIGEST the sha256 of its bytes,
and ``keys/KEY`` names the digest of a key's entry. Both are written atomically (a temporary file
of their own in the same folder, renamed over the name), so a reader finds a whole entry or none.
Read back, an entry is untrusted input: a regular file reached by no link and read no further
than an entry can be (:func:`arena.trust.files.read_untrusted`), whose sha256 equals the digest
asked for (on the server, the one its database recorded, never the folder's own word), which
names the key asked for, and whose every file name is a plain relative path, within the build's
counts and sizes. Anything else is a missing entry (None): built again, never trusted.

:func:`built_files` is the build of a bot in this process: at most once per key (its outcome kept,
a failure too, and inherited by a forked worker), from a cache folder when one is given.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from ...errors import BotLoadError
from ...trust.botfolder import bundle, safe_relative
from ...trust.files import NotRegularFile, read_untrusted
from .build import BuildLimits, run_build

MAGIC = b"#arena-build 1\n"
_HEX = re.compile(r"[0-9a-f]{64}")
_NUMBER = re.compile(rb"0|[1-9][0-9]{0,11}")


def build_key(command: str, files: dict[str, bytes], limits: BuildLimits | None = None) -> str:
    """The sha256 of a build's inputs: the bundle of ``files``, ``command`` and ``limits``."""
    text = bundle("program", tuple(sorted(files.items())))
    digest = hashlib.sha256(b"arena build key 1\0")
    for part in (text, command, json.dumps(asdict(limits or BuildLimits()), sort_keys=True)):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(b"%d\0" % len(data) + data)
    return digest.hexdigest()


def check_names(files: dict[str, bytes], where: str) -> None:
    """:raises BotLoadError: a built file's name is not a plain relative path (as the program's
    stage refuses it: a build that makes one has failed, and is never cached)."""
    bad = [rel for rel in files if not safe_relative(rel)]
    if bad:
        raise BotLoadError(f"a file name that is not a plain relative path: {bad[0][:60]!r}", path=where)


def encode(key: str, files: dict[str, bytes]) -> bytes:
    """An entry: :data:`MAGIC`, the key, the file count, then each file as ``NAMELEN DATALEN\\n``,
    its name (UTF-8) and its bytes, in name order."""
    parts = [MAGIC, key.encode("ascii") + b"\n", b"%d\n" % len(files)]
    for name, data in sorted(files.items()):
        raw = name.encode("utf-8")
        parts += [b"%d %d\n" % (len(raw), len(data)), raw, data]
    return b"".join(parts)


def entry_bound(limits: BuildLimits) -> int:
    """The most bytes an entry of a build within ``limits`` can hold."""
    return len(MAGIC) + 65 + 24 + limits.folder_bytes + limits.folder_files * (24 + 4 * 200)


def decode(data: bytes, key: str, limits: BuildLimits | None = None) -> dict[str, bytes]:
    """The files of an entry built for ``key``. :raises ValueError: anything else."""
    limits = limits or BuildLimits()
    if not data.startswith(MAGIC + key.encode("ascii") + b"\n"):
        raise ValueError("not an entry of this key")
    at = len(MAGIC) + 65

    def line() -> list[int]:
        nonlocal at
        end = data.find(b"\n", at, at + 24)
        if end < 0:
            raise ValueError("a malformed line")
        fields = data[at:end].split(b" ")
        if not all(_NUMBER.fullmatch(f) for f in fields):
            raise ValueError("a malformed number")
        at = end + 1
        return [int(f) for f in fields]

    (count,) = line()
    if count > limits.folder_files:
        raise ValueError("too many files")
    files: dict[str, bytes] = {}
    total = 0
    for _ in range(count):
        size, length = line()
        total += length
        if at + size + length > len(data) or total > limits.folder_bytes:
            raise ValueError("cut short, or too much")
        name = data[at : at + size].decode("utf-8")  # a UnicodeDecodeError is a ValueError
        at += size
        if not safe_relative(name) or name in files:
            raise ValueError("a name that is not a plain relative path, or repeated")
        files[name] = data[at : at + length]
        at += length
    if at != len(data) or list(files) != sorted(files):
        raise ValueError("trailing bytes, or names out of order")
    return files


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:16]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class BuildCache:
    """Builds kept in ``folder``, as the module's docstring says."""

    def __init__(self, folder: str | os.PathLike[str], limits: BuildLimits | None = None) -> None:
        self.folder = Path(folder)
        self.limits = limits or BuildLimits()

    def save(self, key: str, files: dict[str, bytes]) -> str:
        """Keep ``files`` as the build of ``key``; the entry's digest (sha256).

        :raises OSError: the folder cannot be written."""
        data = encode(key, files)
        digest = hashlib.sha256(data).hexdigest()
        for sub in ("objects", "keys"):
            (self.folder / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
        if self._read(self.folder / "objects" / digest, len(data)) != data:
            _write_atomic(self.folder / "objects" / digest, data)
        _write_atomic(self.folder / "keys" / key, digest.encode("ascii"))
        return digest

    def load(self, key: str, digest: str | None = None) -> dict[str, bytes] | None:
        """The built files of ``key`` from the entry of ``digest`` (None: the one ``keys/KEY``
        names), or None when it is missing or is not, whole and exactly, that build."""
        if not _HEX.fullmatch(key):
            return None
        if digest is None:
            named = self._read(self.folder / "keys" / key, 64)
            digest = named.decode("ascii", "replace") if named is not None else ""
        if not _HEX.fullmatch(digest):
            return None
        data = self._read(self.folder / "objects" / digest, entry_bound(self.limits))
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            return None
        try:
            return decode(data, key, self.limits)
        except ValueError:
            return None

    def forget(self, key: str, digest: str) -> None:
        """Delete the entry ``digest`` and the index of ``key`` (a build let go: built again if asked for)."""
        for path in (self.folder / "objects" / digest, self.folder / "keys" / key):
            if _HEX.fullmatch(path.name):
                try:
                    path.unlink()
                except OSError:
                    pass

    @staticmethod
    def _read(path: Path, limit: int) -> bytes | None:
        try:
            got = read_untrusted(path, limit)
        except (OSError, NotRegularFile):
            return None
        return None if got.too_large else got.data


#: Why no build may run in this process (a contest server's: its builds run in its build queue only).
_FORBIDDEN: list[str] = []


@contextmanager
def forbid_builds(why: str) -> Iterator[None]:
    """Within it, a bot whose built files were not given is refused (:class:`BotLoadError` saying
    ``why``) instead of being built here: in a contest server's loops, a build anywhere but its
    build queue would be a bug, and a stall of the loop."""
    _FORBIDDEN.append(why)
    try:
        yield
    finally:
        _FORBIDDEN.pop()


#: Builds made (or read from a cache) in this process: key -> the built files, or the failure.
_BUILT: dict[str, dict[str, bytes] | BotLoadError] = {}
#: Builds kept in :data:`_BUILT` at most (a tournament's parent hands its builds to its workers).
KEEP = 16


def built_files(
    command: str,
    files: dict[str, bytes],
    where: str,
    limits: BuildLimits | None = None,
    cache: BuildCache | None = None,
) -> dict[str, bytes]:
    """The built folder of a bot: ``command`` run over ``files`` once in this process (a failure is
    kept too), taken from ``cache`` when it holds it, and kept there when built.

    :raises BotLoadError: the build failed (its one line, as :func:`~.build.run_build` says it)."""
    limits = limits or BuildLimits()
    key = build_key(command, files, limits)
    found = _BUILT.get(key)
    if found is None and _FORBIDDEN:
        raise BotLoadError(f"not built: {_FORBIDDEN[0]}", path=where)
    if found is None:
        found = cache.load(key) if cache is not None else None
        if found is None:
            try:
                found = run_build(command, files, where, limits)
                check_names(found, where)
            except BotLoadError as exc:
                found = exc
            else:
                if cache is not None:
                    try:
                        cache.save(key, found)
                    except OSError:  # a cache that cannot be written: this build stands, uncached
                        pass
        _BUILT[key] = found
        while len(_BUILT) > KEEP:
            del _BUILT[next(iter(_BUILT))]
    if isinstance(found, BotLoadError):
        raise BotLoadError(found.message, path=where)
    return dict(found)
