"""The referee's end of the sandbox processes: the template per bot, a game process per game, the watchdog.

:class:`Template` starts one bot's template (``python -I``, empty environment,
new session; :mod:`arena.sandbox.python.zygote`) and asks it for a fresh game
process per game. :class:`GameProcess` is the referee's end of one game
process: framed pipes, and the *turn* discipline that makes resources fair:

* between its turns a game process is stopped (SIGSTOP to its process group),
  so it gets no CPU while other seats play; :meth:`GameProcess.begin`
  continues it (SIGCONT) when a message for it is sent, notifications included;
* a turn's time is the CPU time of the game process (its CPU clock, read by
  pid), so load on the machine does not make an honest bot late; a wall-clock
  backstop (:meth:`Limits.backstop`) stops one that waits instead;
* CPU used between turns (possible only when freezing is off) is counted
  against the game's bank and faults the bot past ``Limits.idle_cpu_seconds``.

One watchdog thread per referee process (:mod:`arena.sandbox.jail.watchdog`) kills
processes whose deadline (CPU or wall clock) has passed; the referee itself
uses plain blocking reads.
"""

from __future__ import annotations

import atexit
import marshal
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from typing import Any

from ...trust.botsource import BotSource
from ..failures import Overload, ProtocolViolation, WorkerError, WorkerTimeout, clean, describe_exit, tail

__all__ = [  # the failures are re-exported: callers and tests name them from here
    "GameProcess",
    "Overload",
    "ProtocolViolation",
    "Template",
    "WorkerError",
    "WorkerTimeout",
    "clean",
    "describe_exit",
]
from ..jail.seccomp import export_program
from ..jail.watchdog import _NEVER, _Watchdog, _watchdog  # noqa: F401 - _Watchdog re-exported for tests
from ..limits import Limits, cpu_clock, pin_to_one_cpu
from .protocol import HEADER, decode

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_BOOT = "import sys; sys.path.insert(0, {root!r}); from arena.sandbox.python.zygote import main; main({fd})"

#: marshal format 2: no back-references, so ~1/3 cheaper to write and read than the default
#: for the small messages of the protocol (the views have nothing to share).
_MARSHAL = 2

#: Bytes asked of the pipe per read: replies and views are small, and a 64 KiB buffer
#: allocated and shrunk per read costs more than the rare extra read of a long message.
_CHUNK = 4096

_live: weakref.WeakSet[Any] = weakref.WeakSet()
_clock_gettime = time.clock_gettime  # a process's CPU clock (limits.cpu_seconds), read twice a turn
_monotonic = time.monotonic


@atexit.register
def _kill_all() -> None:
    for w in list(_live):
        if w.owner == os.getpid():
            w.kill()


class _Endpoint:
    """Framed messages over descriptors: marshal out, strict JSON in, at most ``max_reply`` bytes
    a message, ``max_turn_bytes`` and ``max_turn_messages`` a turn (counted from ``begin``)."""

    fd_w: int
    fd_r: int
    max_reply: int
    max_turn_bytes = max_turn_messages = 1 << 62
    turn_bytes = turn_messages = 0
    buf: bytes
    timed_out: bool

    def send(self, message: Any, fds: list[int] | None = None) -> None:
        payload = marshal.dumps(message, _MARSHAL)
        try:
            if fds:
                socket.send_fds(self.sock, [HEADER.pack(len(payload)) + payload], fds)  # type: ignore[attr-defined]
            else:
                os.write(self.fd_w, HEADER.pack(len(payload)) + payload)
        except OSError:
            raise self._died() from None

    def recv(self) -> Any:
        """The next message (blocking; the watchdog ends the wait at the deadline). Its size is
        checked from its header against the message and turn limits before more of it is read."""
        buf = self.buf
        read, fd = os.read, self.fd_r
        while len(buf) < 4:
            buf += self._read(read, fd, _CHUNK)
        (size,) = HEADER.unpack_from(buf)
        if size > self.max_reply:
            raise ProtocolViolation(f"a reply of {size} bytes (limit {self.max_reply})")
        self.turn_messages += 1
        self.turn_bytes += size
        if self.turn_bytes > self.max_turn_bytes:
            raise ProtocolViolation(f"{self.turn_bytes} bytes of messages in a turn (limit {self.max_turn_bytes})")
        if self.turn_messages > self.max_turn_messages:
            raise ProtocolViolation(f"more than {self.max_turn_messages} messages in a turn")
        end = 4 + size
        while len(buf) < end:  # the rest of a long message in as few reads as the pipe gives
            buf += self._read(read, fd, max(end - len(buf), _CHUNK))
        self.buf = buf[end:]
        try:
            return decode(buf[4:end].decode())
        except RecursionError:
            raise ProtocolViolation("a reply nested too deep") from None
        except ValueError as exc:  # UnicodeDecodeError is a ValueError; its text names no reply bytes
            raise ProtocolViolation(f"a reply that is not JSON ({str(exc)[:60]})") from None

    def _read(self, read: Any, fd: int, n: int) -> bytes:
        try:
            data: bytes = read(fd, n)
        except OSError:
            data = b""
        if not data:
            raise self._died()
        return data

    def _died(self) -> WorkerError:  # pragma: no cover - overridden
        raise NotImplementedError


class Template(_Endpoint):
    """One bot's template process: compiled once, forks a hardened game process per game."""

    def __init__(self, src: BotSource, limits: Limits, *, raw_ok: bool = False, escaped: bool = False) -> None:
        self.limits = limits
        self.dead = False
        self.timed_out = False
        self.deadline = _NEVER
        self.cpu_deadline = _NEVER
        self.clock = 0
        self.buf = b""
        self.owner = os.getpid()
        self.lock = threading.Lock()
        #: Game processes killed since the last fork, for the template to reap then.
        self.doomed: list[int] = []
        self.max_reply = 1 << 20
        if limits.same_cpu:
            pin_to_one_cpu()
        self.sock, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOT.format(root=_ROOT, fd=theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env={},
                cwd="/",
                start_new_session=True,
                close_fds=True,
                pass_fds=(theirs.fileno(),),
            )
        finally:
            theirs.close()
        _live.add(self)
        _watchdog.watch(self)
        self.fd_w = self.fd_r = self.sock.fileno()
        self.fd_e = self.proc.stderr.fileno()  # type: ignore[union-attr]
        os.set_blocking(self.fd_e, False)
        program, missing = export_program() if limits.seccomp else (None, "")
        config = {
            "name": src.name,
            "source": src.source,
            "path": src.path,
            "memory_bytes": limits.memory_bytes,
            "cpu_seconds": int(limits.game_seconds * 2 + limits.load_seconds + 10),
            "uid": os.geteuid() == 0,
            "network": limits.network_namespace,
            "seccomp": limits.seccomp,
            # compiled here, once per referee process: a template never imports pyseccomp
            "seccomp_program": program,
            "seccomp_missing": missing,
            "max_output": limits.max_output_bytes,
            "raw_ok": raw_ok or escaped,
            "escaped": escaped,
        }
        try:
            reply = self.request(("hello", config))
        except WorkerError:
            self.kill()
            raise
        if not (type(reply) is list and len(reply) == 3 and reply[0] == "ready" and type(reply[1]) is dict):
            self.kill()
            raise ProtocolViolation("bad ready message")
        #: The template's layers (workdir, netns); each game process reports all of them.
        self.report: dict[str, Any] = reply[1]
        self.load_error: Any = reply[2]

    def request(self, message: Any, fds: list[int] | None = None) -> Any:
        """One request and its answer, within the wall-clock start-up deadline."""
        with self.lock:
            if self.dead:
                raise WorkerError("the bot's template process is gone")
            self.deadline = time.monotonic() + self.limits.startup_seconds
            try:
                self.send(message, fds)
                return self.recv()
            finally:
                self.deadline = _NEVER
                if self.timed_out:
                    self.kill()

    def spawn(self) -> GameProcess:
        """A fresh game process (forked from the template, hardened, not yet given a game)."""
        child_in, ours_w = os.pipe()
        ours_r, child_out = os.pipe()
        err_r, err_w = os.pipe()
        doomed, self.doomed = self.doomed, []
        try:
            reply = self.request(("fork", doomed), [child_in, child_out, err_w])
        except BaseException:
            for fd in (ours_w, ours_r, err_r):
                os.close(fd)
            raise
        finally:
            for fd in (child_in, child_out, err_w):
                os.close(fd)
        if not (type(reply) is list and len(reply) == 2 and reply[0] == "forked" and type(reply[1]) is int):
            for fd in (ours_w, ours_r, err_r):
                os.close(fd)
            self.kill()
            raise ProtocolViolation("bad fork reply")
        os.set_blocking(err_r, False)
        return GameProcess(self, reply[1], ours_w, ours_r, err_r)

    def exit_code(self, pid: int, wait: float) -> int | None:
        """How game process ``pid`` ended (None: still running after ``wait`` seconds, or unknown)."""
        try:
            reply = self.request(("status", pid, wait))
        except WorkerError:
            return None
        code = reply[1] if type(reply) is list and len(reply) == 2 else None
        return code if type(code) is int else None

    def _died(self) -> WorkerError:
        self.dead = True
        if self.timed_out:
            return WorkerTimeout("the template did not answer in time")
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        last = tail(self.fd_e)
        return WorkerError(f"template {describe_exit(code)}" + (f": {last}" if last else ""))

    def signal_kill(self) -> None:
        """SIGKILL the template's process group (safe from the watchdog thread)."""
        if self.proc.returncode is not None or self.owner != os.getpid():
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def kill(self) -> None:
        """Stop the template (its game processes die with it: PR_SET_PDEATHSIG). Idempotent;
        only in the process that started it."""
        self.dead = True
        if self.owner != os.getpid():
            return
        if self.proc.returncode is None:
            self.signal_kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        try:
            self.sock.close()
            self.proc.stderr.close()  # type: ignore[union-attr]
        except OSError:
            pass
        _live.discard(self)
        _watchdog.forget(self)


class GameProcess(_Endpoint):
    """The referee's end of one game process: pipes, its CPU clock, turns, kill."""

    def __init__(self, template: Template, pid: int, fd_w: int, fd_r: int, fd_e: int) -> None:
        self.template = template
        self.limits = template.limits
        self.pid = pid
        self.clock = cpu_clock(pid)
        self.fd_w, self.fd_r, self.fd_e = fd_w, fd_r, fd_e
        self.max_reply = self.limits.max_reply_bytes
        self.max_turn_bytes = self.limits.max_turn_bytes
        self.max_turn_messages = self.limits.max_turn_messages
        self.wall_factor, self.wall_grace = self.limits.wall_factor, self.limits.wall_grace
        #: The wall-clock seconds the turn in progress may take (``Limits.backstop`` of its budget).
        self.backstop = _NEVER
        self.buf = b""
        self.owner = os.getpid()
        self.dead = False
        self.killed = False
        self.timed_out = False
        self.frozen = False
        #: When the watchdog kills this process (monotonic seconds; CPU seconds); never while idle.
        self.deadline = _NEVER
        self.cpu_deadline = _NEVER
        #: CPU seconds of the process at the end of its last turn; CPU seconds used between turns.
        self.cpu_seen = 0.0
        self.idle_cpu = 0.0
        self.wall = 0.0
        self.turns = 0
        #: Whether it is stopped at the end of each turn (from the start, or once it burned between turns).
        self.freezing = self.limits.freeze and self.limits.freeze_after <= 0
        #: Its layers: its first message, written before any bot code ran (a bot cannot forge it).
        self.report: dict[str, Any] = {}
        _live.add(self)
        _watchdog.watch(self)
        #: Until the layers are read, ``recv`` is :meth:`_recv_layers` (an instance attribute,
        #: dropped after it): the per-message path then has no test for it.
        self.recv = self._recv_layers  # type: ignore[method-assign]

    def _recv_layers(self) -> Any:
        """The next message; before it, the process's ``["layers", report]`` (kept in
        :attr:`report`; bounded as a message, not counted in the turn's messages)."""
        del self.recv  # from now on the class's recv (a bound _Endpoint.recv)
        counts = self.turn_messages, self.turn_bytes
        first = self.recv()
        self.turn_messages, self.turn_bytes = counts
        if not (type(first) is list and len(first) == 2 and first[0] == "layers" and type(first[1]) is dict):
            raise ProtocolViolation("the first message is not the process's layers")
        self.report = first[1]
        return self.recv()

    def cpu(self) -> float:
        """The process's CPU seconds so far (the last known value once it is gone)."""
        try:
            return _clock_gettime(self.clock)
        except OSError:
            return self.cpu_seen

    # -- a turn: begin (deadlines armed), send, resume, recv..., end (frozen, time measured) ----
    def begin(self, budget: float) -> tuple[float, float]:
        """Arm the deadlines of a turn of ``budget`` CPU seconds; returns (wall start, CPU start).

        Raises :class:`WorkerTimeout` when the process used more than ``idle_cpu_seconds``
        of CPU since its last turn (a burner that was not frozen)."""
        try:
            cpu = _clock_gettime(self.clock)
        except OSError:
            cpu = self.cpu_seen
        gap = cpu - self.cpu_seen
        if self.turns:  # before its first turn it was being forked and hardened
            self.idle_cpu += gap
            if not self.freezing and self.limits.freeze and gap > self.limits.freeze_after:
                self.freezing = True  # it computes between turns: stopped between them from now on
            if gap > self.limits.idle_cpu_seconds:
                self.cpu_seen = cpu
                self.kill()
                raise WorkerTimeout(f"used {gap:.3g} s of CPU between its turns")
        self.turn_bytes = self.turn_messages = 0
        start = _monotonic()
        self.cpu_deadline = cpu + budget
        self.backstop = backstop = budget * self.wall_factor + self.wall_grace  # Limits.backstop(budget)
        self.deadline = start + backstop
        return start, cpu

    def resume(self) -> None:
        """Let a frozen process run (call after sending it the turn's message)."""
        if self.frozen:
            self.frozen = False
            try:
                os.killpg(self.pid, signal.SIGCONT)
            except OSError:
                pass

    def end(self, start: float, cpu0: float, budget: float) -> tuple[bool, float]:
        """Disarm, freeze, measure: (in time, CPU seconds the turn took)."""
        self.deadline = _NEVER
        self.cpu_deadline = _NEVER
        self.wall = wall = _monotonic() - start
        self.turns += 1
        if self.freezing and not self.killed:
            try:
                os.killpg(self.pid, signal.SIGSTOP)
                self.frozen = True
            except OSError:
                pass
        try:
            cpu = _clock_gettime(self.clock)
        except OSError:
            cpu = self.cpu_seen
        if cpu > self.cpu_seen:
            self.cpu_seen = cpu
        took = cpu - cpu0
        return (not self.timed_out and took <= budget and wall <= self.backstop), took

    def stop(self) -> None:
        """Stop the process until its next turn (between the games of a stream, whether or not
        it is frozen between turns)."""
        if not self.killed and not self.frozen:
            try:
                os.killpg(self.pid, signal.SIGSTOP)
                self.frozen = True
            except OSError:
                pass

    def pending(self) -> bool:
        """Whether bytes wait on the reply pipe (written past the last answer)."""
        try:
            return bool(select.select([self.fd_r], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    def late(self, budget: float, nominal: float, label: str) -> WorkerTimeout:
        """The timeout of a turn that :meth:`end` found late."""
        if self.wall > self.limits.backstop(budget):
            return WorkerTimeout(f"over the wall-clock backstop ({self.limits.backstop(budget):.3g} s)")
        if budget < nominal:
            return WorkerTimeout(f"over the game's CPU time left ({budget:.3g} s)")
        return WorkerTimeout(f"over the {label} ({budget:.3g} s of CPU)")

    def call(self, message: Any, budget: float, nominal: float, label: str) -> tuple[Any, float]:
        """One turn of a single round trip; (reply, CPU seconds). Raises :class:`WorkerError`."""
        start, cpu0 = self.begin(budget)
        try:
            self.send(message)
            self.resume()
            reply = self.recv()
        except WorkerError as exc:
            in_time, _ = self.end(start, cpu0, budget)
            if not in_time or isinstance(exc, WorkerTimeout):
                raise self.late(budget, nominal, label) from None
            raise
        in_time, took = self.end(start, cpu0, budget)
        if not in_time:
            self.kill()
            raise self.late(budget, nominal, label)
        return reply, took

    # -- death ----------------------------------------------------------------------------------
    def stderrtail(self) -> str:
        """The last line the process wrote to stderr (Python's own fatal errors land there)."""
        return tail(self.fd_e)

    def _died(self) -> WorkerError:
        if self.timed_out:
            self.kill()
            return WorkerTimeout("no answer in time")
        self.dead = True
        code = self.template.exit_code(self.pid, 2.0) if not self.killed else None
        last = self.stderrtail()
        self.kill()
        if self.timed_out:
            return WorkerTimeout("no answer in time")
        return WorkerError(f"worker {describe_exit(code)}" + (f": {last}" if last else ""))

    def signal_kill(self) -> None:
        """SIGKILL the process group (safe from the watchdog thread: the template reaps the
        process only after :meth:`kill`, so its pid cannot have been reused)."""
        if self.killed or self.owner != os.getpid():
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def kill(self) -> None:
        """Kill the game process and close the pipes (idempotent; only in the process that made it)."""
        self.dead = True
        if self.killed or self.owner != os.getpid():
            return
        self.deadline = self.cpu_deadline = _NEVER
        self.cpu_seen = max(self.cpu(), self.cpu_seen)
        self.signal_kill()
        self.killed = True
        for fd in (self.fd_w, self.fd_r, self.fd_e):
            try:
                os.close(fd)
            except OSError:
                pass
        self.template.doomed.append(self.pid)
        _live.discard(self)
        _watchdog.forget(self)
