"""A bot folder's build command (``build`` in its bot.toml), run once under the sandbox.

:func:`run_build` is a function of the bot's files, its build command and :class:`BuildLimits`
to the built folder's files, with no other input and no state kept (a cache of builds keyed by
their sha256 may sit on top of it). The build runs through the launcher in build mode
(:mod:`arena.sandbox.jail.launch`), as ``/bin/sh -c BUILD``:

* the first process of a **PID namespace** of its own: when the shell ends (or is killed at
  the time limit), the kernel kills every process it left, and the launcher reports the end
  only once they are all gone; so nothing of a build survives it, whatever process group or
  session it tried to make (the filter refuses both besides);
* in a **folder of its own that is a tmpfs** (``folder_bytes``, ``folder_files``), in its own
  mount namespace, and a bounded private ``/tmp`` (``scratch_bytes``, ``scratch_files``): it
  cannot fill the host's disk, even for a moment; the bot's files are written there by the
  launcher (they never sit in a host folder the build could reach), owned by the build's uid;
* under a **leased uid** of its own (:mod:`arena.sandbox.jail.uids`), held until the launcher, which
  outlives the namespace, is reaped; in an empty network namespace, a root of its own (the
  system's folders read-only), RLIMIT_DATA, RLIMIT_FSIZE and RLIMIT_NPROC, the build filter.

Its output is read by the launcher **after every process of the build is gone**, beneath the
folder's descriptor with no link followed at any depth, regular files only, bounded as it reads
(:func:`arena.trust.files.read_tree`), and sent over a pipe. The referee gives the build
``seconds`` of wall-clock time and keeps the last ``output_bytes`` of its output; its failure
is one line with the compiler's last lines.
"""

from __future__ import annotations

import marshal
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from ...errors import BotLoadError
from ..failures import describe_exit
from ..jail import memgroup
from ..jail.uids import UidLease
from .process import _BOOT, _ROOT, lease_uid, read_frame, report_channel

BUILD_LAYERS = ("workdir", "filesystem", "rlimits", "netns", "pidns", "uid", "no_new_privs", "seccomp")


@dataclass(frozen=True)
class BuildLimits:
    """What a build may use."""

    seconds: float = 120.0
    memory_bytes: int = 2 * 2**30
    file_bytes: int = 64 * 2**20
    output_bytes: int = 64 * 1024
    processes: int = 64
    #: The built folder's size and file count, at most: the size of its tmpfs, and what is read back.
    folder_bytes: int = 64 * 2**20
    folder_files: int = 512
    #: The build's private /tmp (a compiler's scratch), at most.
    scratch_bytes: int = 64 * 2**20
    scratch_files: int = 4096


def run_build(command: str, files: dict[str, bytes], where: str, limits: BuildLimits | None = None) -> dict[str, bytes]:
    """Run ``command`` (with ``sh -c``) over ``files``; the built folder's files.

    :raises BotLoadError: the build failed, ran too long or made too much."""
    limits = limits or BuildLimits()
    lease = lease_uid()
    try:
        return _outcome(*_run(command, files, lease, limits), limits, where)
    finally:
        if lease is not None:
            lease.close()


def _outcome(
    code: int | None, output: bytes, result: dict[str, Any], limits: BuildLimits, where: str
) -> dict[str, bytes]:
    lines = [x.strip() for x in output.decode("utf-8", "replace").splitlines() if x.strip()]
    last = " | ".join(lines[-3:])[-400:]
    if result.get("full"):
        raise BotLoadError(
            f"the build filled its folder (at most {_size(limits.folder_bytes)} in {limits.folder_files} files): "
            f"{last or 'no output'}",
            path=where,
        )
    if code != 0:
        scratch = f" (its /tmp, {_size(limits.scratch_bytes)}, was full)" if result.get("scratch_full") else ""
        raise BotLoadError(f"the build failed ({describe_exit(code)}){scratch}: {last or 'no output'}", path=where)
    if "over" in result:
        raise BotLoadError(
            f"the built folder holds more than {limits.folder_bytes} bytes or {limits.folder_files} files",
            path=where,
        )
    if "error" in result or type(result.get("files")) is not list:
        raise BotLoadError(str(result.get("error", "the build's folder was not read back")), path=where)
    return {str(rel): bytes(data) for rel, data in result["files"]}


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n} bytes"


def _config(command: str, uid: int | None, limits: BuildLimits, report_w: int) -> dict[str, Any]:
    return {
        "mode": "build",
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
        # its folder: a tmpfs of this size and inode count (folders and links are inodes too)
        "size": limits.folder_bytes,
        "inodes": 2 * limits.folder_files + 16,
        "scratch": limits.scratch_bytes,
        "scratch_inodes": limits.scratch_files,
        # what is read back of it
        "folder_bytes": limits.folder_bytes,
        "folder_files": limits.folder_files,
    }


def _run(
    command: str, files: dict[str, bytes], lease: UidLease | None, limits: BuildLimits
) -> tuple[int | None, bytes, dict[str, Any]]:
    """(exit code, None past the time limit; the output's tail; the launcher's result)."""
    report, report_w = report_channel()
    cfg = _config(command, lease.uid if lease is not None else None, limits, report_w)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, marshal.dumps(cfg).hex(), _ROOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={},
            cwd="/",
            start_new_session=True,
            close_fds=True,
            pass_fds=(report_w,) + ((lease.fd,) if lease is not None else ()),
        )
    except BaseException:
        report.close()
        raise
    finally:
        os.close(report_w)
    group = memgroup.make(limits.memory_bytes)  # the whole build's memory, its folder's pages too
    if group is None:
        _say_no_group()
    if group is not None:
        try:  # before the launcher reads the files (below), so before it starts the build
            group.add(proc.pid)
        except OSError:
            group.close()
            group = None
    ran_out = False
    try:
        code, output, result = _supervise(proc, report, files, limits)
    finally:
        if group is not None:
            ran_out = group.ran_out()
            group.close()
    if ran_out and code != 0:  # reclaimed in time, a build may still succeed
        output += f"\nthe build ran out of memory ({_size(limits.memory_bytes)} for all its processes)".encode()
    return code, output, result


_said: list[bool] = []


def _say_no_group() -> None:
    """Say once a process that builds run with per-process memory limits only (ruling 157)."""
    if not _said:
        _said.append(True)
        sys.stderr.write("arena: warning: no memory group on this host: a build's memory is bounded per process only\n")


def _supervise(
    proc: subprocess.Popen[bytes], report: Any, files: dict[str, bytes], limits: BuildLimits
) -> tuple[int | None, bytes, dict[str, Any]]:
    """Hand the launcher its files, then follow the build to its result (see :func:`_run`)."""
    pidfd: int | None = None
    deadline = time.monotonic() + limits.seconds
    try:
        assert proc.stdin is not None and proc.stdout is not None
        try:  # the bot's files: written into the build's folder by the launcher
            proc.stdin.write(marshal.dumps(dict(files)))
            proc.stdin.close()
        except OSError:
            pass
        said, pidfd = read_frame(report, 65536, deadline)  # the layers, and the build's pidfd
        try:
            layers = {str(k): str(v) for k, v in said["layers"].items()}
        except (TypeError, KeyError, AttributeError):
            layers = {}
        weak = [name for name in BUILD_LAYERS if layers.get(name) != "active"]
        if weak:
            _kill(proc, pidfd)
            return -1, f"the build sandbox lacks {', '.join(weak)}: {layers or said!r}"[:600].encode(), {}
        output, result = _follow(proc.stdout.fileno(), report.fileno(), deadline, limits)
        if result is None:
            _kill(proc, pidfd)
            if time.monotonic() >= deadline:
                return None, output + f"\nover the build's {limits.seconds:g} s".encode(), {}
            return -1, output + b"\nthe build's launcher ended without a result", {}
        status = result.get("status")
        code = None
        if type(status) is list and len(status) == 2:
            code = status[1] if status[0] == os.CLD_EXITED else -status[1]
        return code, output, result
    finally:
        report.close()  # before the wait: a launcher still writing its result gets EPIPE, not stuck
        _kill(proc, pidfd)
        if pidfd is not None:
            os.close(pidfd)
        if proc.stdout is not None:
            proc.stdout.close()


def _follow(out: int, report: int, deadline: float, limits: BuildLimits) -> tuple[bytes, dict[str, Any] | None]:
    """The build's output (its last ``output_bytes``) and the launcher's result, read as they
    come until the result is whole, the report pipe ends, or ``deadline``."""
    output = b""
    buf = b""
    bound = limits.folder_bytes + 1024 * limits.folder_files + 65536
    watch = [out, report]
    while watch:
        left = deadline - time.monotonic()
        if left <= 0:
            return output, None
        ready, _, _ = select.select(watch, [], [], left)
        if out in ready:
            try:
                chunk = os.read(out, 65536)
            except OSError:
                chunk = b""
            if chunk:
                output = (output + chunk)[-limits.output_bytes :]
            else:
                watch.remove(out)
        if report in ready:
            try:
                chunk = os.read(report, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                return output, None
            buf += chunk
            if len(buf) >= 4:
                size = int.from_bytes(buf[:4], "little")
                if size > bound:
                    return output, None
                if len(buf) >= 4 + size:
                    try:
                        result = marshal.loads(buf[4 : 4 + size])
                    except (ValueError, EOFError, TypeError):
                        return output, None
                    return output, result if type(result) is dict else None
    return output, None


def _kill(proc: subprocess.Popen[bytes], pidfd: int | None) -> None:
    """End the build (its namespace with its first process) and reap the launcher, which ends
    once the namespace is empty."""
    if proc.returncode is not None:
        return
    try:
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
