"""The template (zygote) process of one bot: forks a fresh, hardened game process per game.

Started by :mod:`arena.sandbox.python.process` as a fresh interpreter (``python -I``,
empty environment, new session) with one end of a unix socket pair. It
imports what a game process will need and nothing of the referee's side (no
``subprocess``, ``threading`` or pyseccomp: every module it holds makes each
fork and each child's start dearer), reads the ``hello`` message, takes the
first shared layers (:func:`~arena.sandbox.jail.harden.harden_template`: an empty
removed working directory, a network namespace), compiles the bot under the
code policy, then takes in itself every other layer a fork inherits
(:func:`~arena.sandbox.jail.harden.template_limits`: RLIMIT_AS/FSIZE/CORE,
no_new_privs, not dumpable). It prepares what each game would otherwise make
anew: the seccomp program the referee compiled (its buffer ready for one
``prctl``), the capget buffers, the game process's :class:`~arena.sandbox.python.botloop.GameLoop`
with the bot's namespace (builtins, guards, stand-in modules: built, never
run) and the contest rules parsed. Then it freezes its objects for the
collector (``gc.freeze``: a child's collections do not touch them) and never
runs bot code.

Per game, the referee sends ``("fork", pids)`` with three descriptors
attached (SCM_RIGHTS): the game process's command pipe, reply pipe and
stderr. The template forks; the child becomes its own process group, keeps
only those descriptors, takes the per-game layers
(:func:`~arena.sandbox.jail.harden.harden_child`: its own uid, RLIMIT_CPU/NOFILE/NPROC,
seccomp with its pid; the inherited layers read back) and serves one game. Its uid is leased
(:mod:`arena.sandbox.jail.uids`) by the template before the fork and held until the child is reaped.
Under its seccomp filter a game process can have no descendant at all: every ``clone``,
``fork`` and ``vfork`` kills it (no thread either).
Because every game starts from the template's memory, a bot cannot carry
anything from one game to the next, not even one that escaped the code policy.

Children are reaped only when the referee says so (the ``pids`` of a later
``fork``): until then a child's pid cannot be reused, so the referee may
signal its process group safely, and its uid stays leased. On end-of-file the
template kills its children, reaps them, and exits.
"""

from __future__ import annotations

import _socket  # the C module only: socket.py would add selectors, select and array to every fork
import gc
import marshal
import os
import signal
import struct
import sys
import time
import warnings
from typing import Any

from ...errors import BotLoadError
from ...game.rules import CONTEST, Rules
from ...trust.botsource import BotSource
from ..jail.harden import HardenReport, harden_child, harden_template, template_limits
from ..jail.seccomp import PreparedFilter, _libc
from ..jail.uids import UID_BASE, UidLease, allocate
from ..policy.compiler import compile_bot
from ..policy.namespace import BotNamespace
from .botloop import Channel, GameLoop, _encode
from .protocol import HEADER, MAX_IN_FRAME

__all__ = ["UID_BASE", "main"]

_PR_SET_PDEATHSIG = 1


class Control:
    """The template's end of the control socket: framed marshal in (with descriptors), JSON out."""

    def __init__(self, fd: int) -> None:
        self.sock = _socket.socket(fileno=fd)
        self.fd = fd
        self.buf = b""
        self.fds: list[int] = []
        self.ancillary = _socket.CMSG_LEN(4 * _FD.size)

    def recv(self) -> tuple[Any, list[int]]:
        """The next message and the descriptors that came with it; exits on end-of-file."""
        while True:
            if len(self.buf) >= 4:
                (size,) = HEADER.unpack_from(self.buf)
                if size > MAX_IN_FRAME:
                    _quit(3)
                if len(self.buf) >= 4 + size:
                    payload, self.buf = self.buf[4 : 4 + size], self.buf[4 + size :]
                    fds, self.fds = self.fds, []
                    return marshal.loads(payload), fds
            data, ancdata, _, _ = self.sock.recvmsg(1 << 16, self.ancillary)
            for level, kind, raw in ancdata:
                if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                    self.fds.extend(f for (f,) in _FD.iter_unpack(raw[: len(raw) - len(raw) % _FD.size]))
            if not data:
                _quit(0)
            self.buf += data

    def send(self, message: Any) -> None:
        payload = _encode(message)
        self.sock.sendall(HEADER.pack(len(payload)) + payload)


_FD = struct.Struct("i")
_children: set[int] = set()
#: The uid each child not yet reaped holds (closed, so freed, once the child is reaped).
_leases: dict[int, UidLease] = {}


def _quit(code: int) -> None:
    """Kill every child not yet reaped, reap them (their uids are free only then), then exit
    (the referee is gone or broke the protocol)."""
    for pid in _children:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid in _children:
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass
    os._exit(code)


def _exit_code(pid: int, timeout: float) -> int | None:
    """How child ``pid`` ended, Popen style (negative: killed by that signal), without
    reaping it; None when it has not ended within ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while True:
        try:
            info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return None
        if info is not None and info.si_pid == pid:
            return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        if time.monotonic() >= end:
            return None
        time.sleep(0.002)


def _reap(doomed: set[int]) -> None:
    for pid in list(doomed):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done == pid:
            doomed.discard(pid)
            _children.discard(pid)
            lease = _leases.pop(pid, None)
            if lease is not None:
                lease.close()


class Prepared:
    """What the template makes once for all its game processes (none of it runs bot code)."""

    def __init__(self, config: dict[str, Any], code: Any, report: HardenReport) -> None:
        self.config = config
        self.report = report
        self.memory_bytes = int(config["memory_bytes"])
        self.cpu_seconds = int(config["cpu_seconds"])
        self.seccomp = bool(config.get("seccomp", True))
        self.filter: PreparedFilter | None = None
        self.seccomp_missing = str(config.get("seccomp_missing") or "")
        program = config.get("seccomp_program")
        if self.seccomp and program is not None:
            try:
                self.filter = PreparedFilter(program)
            except ValueError as exc:
                self.seccomp_missing = f"the referee's filter is unusable ({exc})"
        elif self.seccomp and not self.seccomp_missing:
            self.seccomp_missing = "the referee sent no filter"
        self.uid = bool(config.get("uid")) and os.geteuid() == 0
        self.template_pid = os.getpid()
        #: The game process's worker: its channel and layers are set after the fork.
        self.worker = GameLoop(Channel(-1, -1), config, code)
        if not self.worker.escaped:  # the bot's namespace, built here (its seed is set per game)
            self.worker.space = BotNamespace(0, self.worker.sink)
        rules = CONTEST.to_dict()  # the contest's rules, parsed once (others are parsed per game)
        self.worker.rules = Rules.from_dict(rules)
        self.worker.rules_key = marshal.dumps(rules)


def _game_process(fds: list[int], prep: Prepared, uid: int | None) -> None:
    """The forked child: its own group, its own descriptors (the uid's lock is not one of them:
    the template holds it), the per-game layers under ``uid``, one game."""
    os.setpgid(0, 0)
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the template gone: so are we
    if os.getppid() != prep.template_pid:  # it went before the line above took effect
        os._exit(4)
    fd_in, fd_out, fd_err = fds
    os.dup2(fd_err, 1)
    os.dup2(fd_err, 2)
    keep = sorted({0, 1, 2, fd_in, fd_out})
    for low, high in zip(keep, keep[1:] + [1 << 16], strict=True):
        if high > low + 1:
            os.closerange(low + 1, high)
    final = harden_child(
        prep.report,
        memory_bytes=prep.memory_bytes,
        cpu_seconds=prep.cpu_seconds,
        uid=uid,
        seccomp=prep.seccomp,
        open_fds=keep,
        prepared=prep.filter,
        seccomp_missing=prep.seccomp_missing,
    )
    worker = prep.worker
    worker.chan = Channel(fd_in, fd_out)
    # The layers go out now, before the bot's code runs in this process (its module, at the
    # ``game`` message): a bot that escaped the code policy can change what this process
    # would say later, never what it already wrote to the pipe.
    worker.chan.send(["layers", final.as_dict()])
    try:
        worker.loop()
    except BaseException:  # noqa: BLE001 - a broken game process just ends; the referee sees a crash
        os._exit(4)
    os._exit(0)


def _lease() -> UidLease | None:
    """A uid for the next game process (None when none can be had: its uid layer then reads
    unavailable, and the referee refuses a sandbox without it)."""
    try:
        return allocate()
    except OSError:
        return None


def _compile(src: BotSource, escaped: bool) -> tuple[Any, list[Any] | None]:
    try:
        if escaped:
            return compile(src.source, "<bot>", "exec"), None
        return compile_bot(src), None
    except BotLoadError as exc:
        return None, [exc.message, exc.line]
    except SyntaxError as exc:
        return None, [f"syntax error: {exc.msg}", exc.lineno]


def main(fd: int) -> None:
    """Entry point of the template process; ``fd`` is its end of the control socket."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # nothing printed by accident reaches a protocol descriptor
    warnings.simplefilter("ignore")  # compiling bot code must not write to stderr
    ctl = Control(fd)
    hello, _ = ctl.recv()
    if type(hello) is not tuple or hello[0] != "hello":
        _quit(3)
    config = hello[1]
    escaped = bool(config.get("raw_ok") and config.get("escaped"))
    if escaped:  # tests: an escaped bot's tools at hand (an ordinary template holds none of these)
        import ctypes  # noqa: F401
        import hashlib  # noqa: F401
        import hmac  # noqa: F401
        import secrets  # noqa: F401
        import select  # noqa: F401
        import socket  # noqa: F401
        import subprocess  # noqa: F401
    report = harden_template(network=bool(config.get("network", True)))
    src = BotSource(config["name"], config["source"], config.get("path"))
    code, error = _compile(src, escaped)
    if error is not None and not config.get("raw_ok"):
        ctl.send(["ready", report.as_dict(), error])
        _quit(0)
    template_limits(report, memory_bytes=int(config["memory_bytes"]))
    prep = Prepared(config, code, report)
    gc.collect()
    gc.freeze()  # the template's objects: never scanned (so never written) by a child's collections
    ctl.send(["ready", report.as_dict(), error])
    doomed: set[int] = set()
    while True:
        msg, fds = ctl.recv()
        kind = msg[0] if type(msg) is tuple and msg else None
        if kind == "fork" and len(fds) == 3:
            doomed.update(p for p in msg[1] if p in _children)
            _reap(doomed)
            lease = _lease() if prep.uid else None
            pid = os.fork()
            if pid == 0:
                try:
                    _game_process(fds, prep, lease.uid if lease is not None else None)
                finally:
                    os._exit(4)
            for f in fds:
                os.close(f)
            if lease is not None:
                _leases[pid] = lease
            try:
                os.setpgid(pid, pid)  # also done by the child: whichever runs first
            except OSError:
                pass
            _children.add(pid)
            ctl.send(["forked", pid])
        elif kind == "status" and len(msg) == 3 and msg[1] in _children:
            ctl.send(["status", _exit_code(msg[1], float(msg[2]))])
        else:
            for f in fds:
                os.close(f)
            _quit(3)


if __name__ == "__main__":
    main(int(sys.argv[1]))
