"""A bot folder's build command (``build`` in its bot.toml), run once under the sandbox.

The build runs in a fresh folder holding the bot's files, owned by a uid of its own, through
the launcher in build mode (:mod:`arena.sandbox.jail.launch`): its own root (the system's folders
read-only, its folder as a writable ``/bot``, a private tmpfs ``/tmp``; nothing of the
organiser's, nor of the other bots'), an empty network namespace, RLIMIT_DATA,
RLIMIT_FSIZE and RLIMIT_NPROC of :class:`BuildLimits`, the build seccomp filter. The referee
gives it ``seconds`` of wall-clock time and keeps the last ``output_bytes`` of its output;
its failure is one line with the compiler's last lines.
"""

from __future__ import annotations

import marshal
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from ...errors import BotLoadError
from ..failures import describe_exit
from .process import _BOOT, _ROOT, _next_uid

BUILD_LAYERS = ("workdir", "filesystem", "rlimits", "netns", "uid", "no_new_privs", "seccomp")


@dataclass(frozen=True)
class BuildLimits:
    """What a build may use."""

    seconds: float = 120.0
    memory_bytes: int = 2 * 2**30
    file_bytes: int = 64 * 2**20
    output_bytes: int = 64 * 1024
    processes: int = 64
    #: The built folder's size and file count, at most.
    folder_bytes: int = 64 * 2**20
    folder_files: int = 512


def _collect(root: str, limits: BuildLimits, where: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    total = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            total += os.path.getsize(path)
            if total > limits.folder_bytes or len(files) >= limits.folder_files:
                raise BotLoadError(
                    f"the built folder holds more than {limits.folder_bytes} bytes or {limits.folder_files} files",
                    path=where,
                )
            with open(path, "rb") as fh:
                files[os.path.relpath(path, root)] = fh.read(limits.folder_bytes)
    return files


def run_build(command: str, files: dict[str, bytes], where: str, limits: BuildLimits | None = None) -> dict[str, bytes]:
    """Run ``command`` (with ``sh -c``) over ``files``; the built folder's files.

    :raises BotLoadError: the build failed, ran too long or made too much."""
    limits = limits or BuildLimits()
    parent = tempfile.mkdtemp(prefix="arena-build-")
    work = os.path.join(parent, "bot")
    uid = _next_uid()
    try:
        os.mkdir(work, 0o700)
        for rel, data in files.items():
            path = os.path.join(work, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "xb") as fh:
                fh.write(data)
        os.chmod(parent, 0o711)  # the launcher makes the copy its build's own (its uid: base + its pid)
        code, output = _run(command, work, uid, limits)
        if code != 0:
            lines = [x.strip() for x in output.decode("utf-8", "replace").splitlines() if x.strip()]
            last = " | ".join(lines[-3:])[-400:]
            raise BotLoadError(f"the build failed ({describe_exit(code)}): {last or 'no output'}", path=where)
        return _collect(work, limits, where)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def _run(command: str, work: str, uid: int, limits: BuildLimits) -> tuple[int | None, bytes]:
    report_r, report_w = os.pipe()
    cfg = {
        "mode": "build",
        "cwd": work,
        "uid": uid,
        "network": True,
        "seccomp": True,
        "memory_bytes": limits.memory_bytes,
        "file_bytes": limits.file_bytes,
        "cpu_seconds": int(limits.seconds) + 1,
        "threads": limits.processes,
        "argv": ["/bin/sh", "-c", command],
        "env": {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/bot", "TMPDIR": "/tmp", "LANG": "C.UTF-8"},
        "order": list(BUILD_LAYERS),
        "report_fd": report_w,
        "parent": os.getpid(),  # the build dies with this process (PR_SET_PDEATHSIG)
    }
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, marshal.dumps(cfg).hex(), _ROOT],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={},
            cwd="/",
            start_new_session=True,
            close_fds=True,
            pass_fds=(report_w,),
        )
    finally:
        os.close(report_w)
    with os.fdopen(report_r, "rb") as fh:
        report = fh.read(65536)
    try:
        layers = dict(marshal.loads(report)["layers"])
    except (ValueError, EOFError, KeyError, TypeError):
        layers = {}
    weak = [name for name in BUILD_LAYERS if layers.get(name) != "active"]
    out = proc.stdout
    assert out is not None
    os.set_blocking(out.fileno(), False)
    output = b""
    deadline = time.monotonic() + limits.seconds
    code: int | None = None
    while True:
        try:
            chunk = out.read(65536)
        except OSError:
            chunk = None
        if chunk:
            output = (output + chunk)[-limits.output_bytes :]
        code = proc.poll()
        if code is not None and not chunk:
            break
        if time.monotonic() > deadline:
            break
        if not chunk:
            time.sleep(0.01)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()
    out.close()
    if weak:
        return -1, output + f"\nthe build sandbox lacks {', '.join(weak)}: {layers or report[:200]!r}".encode()
    if code is None:
        return None, output + f"\nover the build's {limits.seconds:g} s".encode()
    return code, output
