"""Bot programs in any language (a ``.js`` file, a ``bot.toml`` folder): the referee's side.

A :class:`ProgramFactory` stages the bot's files once in a read-only folder; every stream of
games (or every game, without a stream) gets a fresh process from a clean start: the launcher
(:mod:`arena.sandbox.jail.launch`) takes the OS layers and execs the program, the first process of
a PID namespace of its own, which then speaks protocol v1 (docs/protocol.md,
:mod:`arena.sandbox.programs.wire`) on its stdin and stdout. The referee holds a pidfd of the
program (not of the launcher, its supervisor), sent by the launcher with its report: every
signal goes through it, so none can reach another process, even once the program is gone.
The turn discipline is the Python sandbox's: the process runs only during its turns (SIGSTOP
between them), each turn is timed on its CPU clock (all its threads: a program may start no
process, only threads) against the move limit and the game's bank, with the wall-clock
backstop kept by the one watchdog; its lines are bounded by ``Limits`` (bytes a line and a
turn, lines and actions a turn). A program over its memory (RLIMIT_DATA, and V8's own heap
limit for node) faults as ``memory``. Its uid is leased (:mod:`arena.sandbox.jail.uids`) until the
launcher, which outlives its namespace, is reaped.
"""

from __future__ import annotations

import fcntl
import marshal
import os
import select
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from ...game.events import FaultKind
from ..failures import ProtocolViolation, WorkerError, WorkerTimeout, clean, describe_exit
from ..jail.program_filter import export_program_filter
from ..jail.uids import UidLease, allocate
from ..jail.watchdog import _NEVER, _watchdog
from ..limits import Limits, cpu_clock, cpu_seconds
from . import wire as jsonwire

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
#: The launcher's start: ``arena`` and ``arena.sandbox`` as bare packages (their ``__init__`` would
#: import the engine: tens of milliseconds a process), then the launcher and what it imports.
_BOOT = (
    "import sys, types\n"
    "for name, sub in (('arena', '/arena'), ('arena.sandbox', '/arena/sandbox')):\n"
    "    m = types.ModuleType(name); m.__path__ = [sys.argv[2] + sub]; sys.modules[name] = m\n"
    "from arena.sandbox.jail.launch import main\n"
    "main(sys.argv[1])"
)
#: The layers a program runs under, in the order they are reported (those of a Python bot).
PROGRAM_LAYERS = ("workdir", "filesystem", "rlimits", "netns", "pidns", "uid", "no_new_privs", "seccomp")
#: Texts in a dead program's last words that mean it ran out of memory (V8, the C++ and C libraries).
_OOM = ("heap out of memory", "out of memory", "bad_alloc", "Cannot allocate memory", "MemoryError")
#: The stderr pipe's size: what a program may write to stderr in one turn before it blocks.
STDERR_PIPE_BYTES = 1 << 20
_F_SETPIPE_SZ = 1031
#: Threads a program may run (RLIMIT_NPROC of its own uid): node runs about 7 with one V8 worker.
THREADS = 16


_FRAME = 4  # the launcher's frames: a little-endian length, then marshal (launch.FRAME)


def lease_uid() -> UidLease | None:
    """A uid for a launcher (None when the referee is not root: it drops no uid). A uid that
    cannot be had leaves the launcher's uid layer unavailable, so the program is refused."""
    if os.geteuid() != 0:
        return None
    try:
        return allocate()
    except OSError:
        return None


def report_channel() -> tuple[socket.socket, int]:
    """The launcher's report channel: (the referee's end, the launcher's descriptor, to pass it).
    A unix socket, not a pipe: the first frame carries the program's pidfd (SCM_RIGHTS)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return ours, theirs.detach()


def read_frame(sock: socket.socket, limit: int, deadline: float = _NEVER) -> tuple[Any, int | None]:
    """The next frame the launcher wrote on ``sock`` (blocking; with a ``deadline``, polled up to
    it), and the descriptor it carried if any (the program's pidfd, with the first): (its
    message, or None at end-of-file, past ``deadline``, over ``limit`` bytes, or garbled; fd)."""
    fd = sock.fileno()
    got = b""
    carried: list[int] = []
    need = _FRAME
    room = socket.CMSG_SPACE(4)
    try:
        while len(got) < need:
            if deadline != _NEVER:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    return None, _first(carried)
            try:
                data, ancillary, _flags, _addr = sock.recvmsg(min(need - len(got), 1 << 20), room)
            except OSError:
                return None, _first(carried)
            for level, kind, raw in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    carried.extend(int.from_bytes(raw[i : i + 4], sys.byteorder) for i in range(0, len(raw) - 3, 4))
            if not data:
                return None, _first(carried)
            got += data
            if len(got) == _FRAME:
                need = _FRAME + int.from_bytes(got, "little")
                if need - _FRAME > limit:
                    return None, _first(carried)
        try:
            return marshal.loads(got[_FRAME:]), _first(carried)
        except (ValueError, EOFError, TypeError):
            return None, _first(carried)
    finally:
        for extra in carried[1:]:
            os.close(extra)


def _first(fds: list[int]) -> int | None:
    return fds[0] if fds else None


@dataclass(frozen=True)
class Runtime:
    """How to start a staged program: ``argv`` run in the stage folder, and its environment."""

    name: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


def node_runtime(limits: Limits, *args: str) -> Runtime:
    """node with its memory and threads bounded, running ``args`` (node's options, then the script)."""
    heap = max(16, limits.memory_bytes // 2**20 // 2)
    argv = (
        "/usr/bin/node",
        f"--max-old-space-size={heap}",
        "--v8-pool-size=1",
        "--disallow-code-generation-from-strings",
        *args,
    )
    return Runtime("node", argv, (("UV_THREADPOOL_SIZE", "1"),))


class ProgramProcess:
    """One running program: its pipes, its CPU clock, its turns, its death."""

    def __init__(self, stage: str, runtime: Runtime, limits: Limits) -> None:
        self.limits = limits
        self.timed_out = False
        self.dead = self.killed = self.frozen = False
        self.deadline = self.cpu_deadline = _NEVER
        self.buf = b""
        self.cpu_seen = self.turn_end_cpu = 0.0
        self.turns = 0
        #: Whether it is stopped between turns: from the start when ``freeze_after`` is 0, else
        #: once it used more than that between two turns.
        self.freezing = limits.freeze and limits.freeze_after <= 0
        self.turn_bytes = self.turn_lines = 0
        self.wall = 0.0
        #: Wall seconds of this turn the program spent waiting for the referee's answers to its requests.
        self.referee_wall = 0.0
        self.owner = os.getpid()
        self.pidfd: int | None = None
        self.lease = lease_uid()
        report, report_w = report_channel()
        cfg = {
            "cwd": stage,
            "uid": self.lease.uid if self.lease is not None else None,
            "network": limits.network_namespace,
            "seccomp": limits.seccomp,
            "memory_bytes": limits.memory_bytes * 2 if runtime.name == "node" else limits.memory_bytes,
            "cpu_seconds": int(limits.game_seconds * 2 + limits.load_seconds + 10),
            "threads": THREADS,
            "argv": list(runtime.argv),
            "env": dict(runtime.env),
            "order": list(PROGRAM_LAYERS),
            "report_fd": report_w,
            "parent": os.getpid(),  # the program dies with this process (PR_SET_PDEATHSIG)
        }
        if limits.seccomp:
            program, _missing = export_program_filter()
            cfg["filter"] = program.hex() if program is not None else ""
        try:
            self.proc = subprocess.Popen(
                # -S: no site (the launcher needs nothing outside the standard library and arena)
                [sys.executable, "-I", "-S", "-c", _BOOT, marshal.dumps(cfg).hex(), _ROOT],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={},
                cwd="/",
                start_new_session=True,
                close_fds=True,
                pass_fds=(report_w,) + ((self.lease.fd,) if self.lease is not None else ()),
            )
        except BaseException:
            report.close()
            if self.lease is not None:
                self.lease.close()
            raise
        finally:
            os.close(report_w)
        #: The program's pid (the launcher's until its report names the program).
        self.pid = self.proc.pid
        self.clock = cpu_clock(self.pid)
        self.fd_w = self.proc.stdin.fileno()  # type: ignore[union-attr]
        self.fd_r = self.proc.stdout.fileno()  # type: ignore[union-attr]
        self.fd_e = self.proc.stderr.fileno()  # type: ignore[union-attr]
        os.set_blocking(self.fd_e, False)
        try:  # room for 1 MiB of stderr a turn (drained after each): a chatty bot does not block on it
            fcntl.fcntl(self.fd_e, _F_SETPIPE_SZ, STDERR_PIPE_BYTES)
        except OSError:
            pass
        self.stderr = b""
        #: Bytes read from its stderr so far (the last 16 KiB of them are kept in :attr:`stderr`).
        self.stderr_seen = 0
        _watchdog.watch(self)
        self.deadline = time.monotonic() + limits.startup_seconds
        try:
            said, self.pidfd = read_frame(report, 65536)
        finally:
            report.close()
            self.deadline = _NEVER
        try:  # written by the launcher before the program runs (it cannot reach this channel)
            self.report: dict[str, str] = {str(k): str(v) for k, v in said["layers"].items()}
        except (TypeError, KeyError, AttributeError):
            self.kill()
            raise WorkerError(f"the launcher did not start: {self.last_words()}") from None
        pid = said.get("pid")
        if type(pid) is int and pid > 0:  # the program, not its launcher: its clock (and its pidfd's signals)
            self.pid = pid
            self.clock = cpu_clock(pid)

    # -- lines -----------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        try:
            os.write(self.fd_w, jsonwire.encode(message))
        except OSError:
            raise self.died() from None

    def recv(self) -> bytes:
        """The program's next line (without its newline), bounded by the message and turn limits."""
        limits = self.limits
        while True:
            end = self.buf.find(b"\n")
            if end >= 0:
                break
            if len(self.buf) > limits.max_reply_bytes:
                raise ProtocolViolation(f"a line longer than {limits.max_reply_bytes} bytes")
            try:
                chunk = os.read(self.fd_r, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                raise self.died()
            self.buf += chunk
            self.turn_bytes += len(chunk)
            if self.turn_bytes > limits.max_turn_bytes:
                raise ProtocolViolation(f"more than {limits.max_turn_bytes} bytes in a turn")
        line, self.buf = self.buf[:end], self.buf[end + 1 :]
        if end > limits.max_reply_bytes:
            raise ProtocolViolation(f"a line longer than {limits.max_reply_bytes} bytes")
        self.turn_lines += 1
        if self.turn_lines > limits.max_turn_messages:
            raise ProtocolViolation(f"more than {limits.max_turn_messages} lines in a turn")
        return line

    def pending(self) -> bool:
        """Whether the program wrote anything past its last answer (a line out of turn)."""
        if self.buf:
            return True
        try:
            return bool(select.select([self.fd_r], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    # -- turns -----------------------------------------------------------------------------
    def cpu(self) -> float:
        try:
            self.cpu_seen = max(self.cpu_seen, cpu_seconds(self.clock))
        except OSError:
            pass
        return self.cpu_seen

    def begin(self, budget: float) -> tuple[float, float]:
        """Arm a turn's deadlines. As for a Python game process (``Limits.freeze_after``): a
        program is stopped between its turns once it used CPU between them (node's own threads
        do), and faulted past ``idle_cpu_seconds`` of it (threads left burning)."""
        cpu = self.cpu()
        if self.turns:
            gap = cpu - self.turn_end_cpu
            if self.limits.freeze and gap > self.limits.freeze_after:
                self.freezing = True
            if gap > self.limits.idle_cpu_seconds:
                self.kill()
                raise WorkerTimeout(f"used {gap:.3g} s of CPU between its turns")
        self.turn_bytes = self.turn_lines = 0
        start = time.monotonic()
        self.referee_wall = 0.0
        self.cpu_deadline = cpu + budget
        self.deadline = start + self.limits.backstop(budget)
        if self.frozen:
            self.frozen = False
            self._signal(signal.SIGCONT)
        return start, cpu

    def hold_backstop(self) -> float:
        """The program waits while the referee answers its request (the forward model's work for
        it): its wall-clock backstop stops meanwhile, so that a loaded machine, slow at the
        referee's work, never faults the program for time that was not its own. The wall time
        left to it; :meth:`charge` gives it back."""
        left = self.deadline - time.monotonic()
        self.deadline = _NEVER
        return left

    def charge(self, seconds: float, left: float = _NEVER, waited: float = 0.0) -> None:
        """Count ``seconds`` of the referee's CPU as the program's in this turn: its CPU deadline
        comes that much closer (the forward model's work for it, docs/protocol.md). Its
        wall-clock backstop goes on with ``left`` seconds (:meth:`hold_backstop`), and the
        ``waited`` seconds are not counted as its wall time."""
        self.cpu_deadline -= seconds
        if left != _NEVER:
            self.deadline = time.monotonic() + left
        self.referee_wall += waited

    def end(self, start: float, cpu0: float, budget: float) -> tuple[bool, float]:
        self.deadline = self.cpu_deadline = _NEVER
        self.wall = time.monotonic() - start - self.referee_wall
        self.turns += 1
        if self.freezing and not self.killed:
            self._signal(signal.SIGSTOP)
            self.frozen = True
        took = self.cpu() - cpu0
        self.turn_end_cpu = self.cpu_seen
        self.drain()
        return (not self.timed_out and took <= budget and self.wall <= self.limits.backstop(budget)), took

    def stop(self) -> None:
        """Stop the process until its next turn (between the games of a stream)."""
        if not self.killed and not self.frozen:
            self._signal(signal.SIGSTOP)
            self.frozen = True

    def late(self, budget: float, nominal: float, label: str) -> WorkerTimeout:
        if self.wall > self.limits.backstop(budget):
            return WorkerTimeout(f"over the wall-clock backstop ({self.limits.backstop(budget):.3g} s)")
        if budget < nominal:
            return WorkerTimeout(f"over the game's CPU time left ({budget:.3g} s)")
        return WorkerTimeout(f"over the {label} ({budget:.3g} s of CPU)")

    # -- death -----------------------------------------------------------------------------
    def drain(self) -> None:
        """Read what the program wrote to stderr (so it never blocks on it); the last 16 KiB are kept."""
        try:
            while True:
                chunk = os.read(self.fd_e, 65536)
                if not chunk:
                    break
                self.stderr = (self.stderr + chunk)[-16384:]
                self.stderr_seen += len(chunk)
        except (OSError, ValueError):
            pass

    def stderr_since(self, mark: int) -> bytes:
        """What it wrote to stderr after :attr:`stderr_seen` was ``mark`` (the last 16 KiB of it at most).
        A killed process's pipe is closed, its descriptor's number maybe another's now: never read again."""
        if not self.killed:
            self.drain()
        n = min(self.stderr_seen - mark, len(self.stderr))
        return self.stderr[len(self.stderr) - n :] if n > 0 else b""

    def last_words(self) -> str:
        """The program's last stderr line."""
        self.drain()
        lines = [x for x in self.stderr.decode("utf-8", "replace").splitlines() if x.strip()]
        return clean(lines[-1].strip(), 200) if lines else ""

    def out_of_memory(self) -> bool:
        text = self.stderr.decode("utf-8", "replace")
        return any(mark in text for mark in _OOM)

    def died(self) -> WorkerError:
        if self.timed_out:
            self.kill()
            return WorkerTimeout("no answer in time")
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        last = self.last_words()
        self.kill()
        if self.timed_out:
            return WorkerTimeout("no answer in time")
        if self.out_of_memory():
            return OutOfMemory(f"over its memory limit ({self.limits.memory_bytes >> 20} MiB): {last}"[:250])
        return WorkerError(f"program {describe_exit(code)}" + (f": {last}" if last else ""))

    def _signal(self, sig: int) -> None:
        """Signal the program through its pidfd, opened by the launcher (its parent) before the
        program could be reaped, so it names the program and nothing else; before there is one,
        the launcher's process group, while the launcher is not reaped. The program's end ends
        its namespace."""
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, sig)
            elif self.proc.returncode is None:
                os.killpg(self.proc.pid, sig)
        except OSError:
            pass

    def signal_kill(self) -> None:
        if not self.killed and self.owner == os.getpid():
            self._signal(signal.SIGKILL)

    def kill(self) -> None:
        self.dead = True
        if self.killed or self.owner != os.getpid():
            return
        self.cpu()
        self.signal_kill()
        self.killed = True
        self.deadline = self.cpu_deadline = _NEVER
        _watchdog.forget(self)
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:  # the launcher ends once the program's namespace is empty
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # not reaped yet: still its group
            except OSError:
                pass
            self.proc.wait()
        if self.lease is not None:  # nothing runs under the uid any more
            self.lease.close()
        try:
            self.proc.stderr.close()  # type: ignore[union-attr]
        except OSError:
            pass

    def __del__(self) -> None:
        # The pidfd is closed only here, when no thread (the watchdog) can still be about to use
        # it: a descriptor closed earlier could be reused by another program's pidfd.
        fd, self.pidfd = getattr(self, "pidfd", None), None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


class OutOfMemory(WorkerError):
    kind = FaultKind.MEMORY
