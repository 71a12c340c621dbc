"""What a sandboxed bot may use (:class:`Limits`), and the clocks and CPU pinning that enforce it."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

#: Linux's CPUCLOCK_SCHED: a process's CPU time in nanoseconds, as its scheduler counts it.
_CPUCLOCK_SCHED = 2


@dataclass(frozen=True)
class Limits:
    """What a sandboxed bot may use.

    Times for the bot are **CPU seconds** of its game process, measured by the
    referee from the process's CPU clock (so a loaded machine does not make an
    honest bot late), with a generous wall-clock backstop (:meth:`backstop`)
    for a bot that waits instead of computing.
    """

    #: CPU time for one move (all its round trips), and for each notification.
    move_seconds: float = 1.0
    #: CPU time for the whole game: everything the game process uses, from its fork on.
    game_seconds: float = 30.0
    #: CPU time for making ``Bot()`` (module code included) and ``start_game``.
    load_seconds: float = 5.0
    #: Wall-clock deadline for a new template: interpreter start, imports, hardening, compiling.
    startup_seconds: float = 20.0
    #: The wall-clock backstop of a call is ``budget * wall_factor + wall_grace`` seconds.
    wall_factor: float = 5.0
    wall_grace: float = 1.0
    #: Stop (SIGSTOP) a game process between its turns, so it gets no CPU while others play:
    #: from its first turn when ``freeze_after`` is 0; else from the first turn after which it
    #: used more than ``freeze_after`` CPU seconds between turns (an honest bot, blocked on its
    #: pipe between turns, never does, and so never pays the two signals per turn).
    freeze: bool = True
    freeze_after: float = 0.001
    #: CPU a game process may use between its turns before it is faulted (reachable only
    #: when it is not frozen: timers, signal handlers).
    idle_cpu_seconds: float = 0.1
    #: Address-space cap of the worker (RLIMIT_AS).
    memory_bytes: int = 256 * 2**20
    #: The largest reply a worker may send (bytes; refused from its length header, before it is read).
    max_reply_bytes: int = 256 * 1024
    #: Bounds on what a game process sends in one move or notification (one *turn*), over all its
    #: messages, whatever their kinds: bytes, messages, actions (put, draw, finish, say, output).
    #: An honest worker stays far below each (docs/readme-sandbox.md, "Bot messages"); going over
    #: one is a ``crash`` fault (a protocol violation) with the referee CPU the turn cost in its detail.
    max_turn_bytes: int = 256 * 1024
    max_turn_messages: int = 128
    max_turn_actions: int = 512
    #: The referee's CPU time spent on one turn of a seat (sending its view, reading, decoding and
    #: re-applying its messages); more is a ``timeout`` fault. It is also taken from the game's bank.
    referee_turn_seconds: float = 0.05
    #: Printed output kept per game (characters); the rest is dropped with a mark.
    max_output_bytes: int = 4096
    #: Ask for the network-namespace and seccomp layers (reported when unavailable either way).
    network_namespace: bool = True
    seccomp: bool = True
    #: Keep the referee process on one CPU so its workers (which inherit the
    #: affinity) run beside it: a pipe round trip between two CPUs of a VM
    #: costs ~50 us, on one CPU ~8 us (benchmarks/sandbox.py shows the effect).
    same_cpu: bool = True

    def backstop(self, budget: float) -> float:
        """The wall-clock seconds a call with ``budget`` CPU seconds may take at most."""
        return budget * self.wall_factor + self.wall_grace

    def check(self) -> Limits:
        """Self, when every time is positive and finite; else ValueError."""
        for name in ("move_seconds", "game_seconds", "load_seconds", "startup_seconds", "referee_turn_seconds"):
            value = getattr(self, name)
            if not (0 < value < 10**6):
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
        for name in ("max_reply_bytes", "max_turn_bytes", "max_turn_messages", "max_turn_actions"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be a positive whole number, not {value!r}")
        return self


def cpu_clock(pid: int) -> int:
    """The clock id of process ``pid``'s CPU time (glibc's ``clock_getcpuclockid``)."""
    return ((~pid) << 3) | _CPUCLOCK_SCHED


def cpu_seconds(clock: int) -> float:
    """CPU seconds on ``clock``; raises OSError when the process is gone."""
    return time.clock_gettime(clock)


def cpu_clocks_work() -> bool:
    """Whether this machine lets the referee read a process's CPU clock by pid."""
    try:
        return cpu_seconds(cpu_clock(os.getpid())) > 0
    except (OSError, AttributeError, OverflowError):
        return False


def current_cpu() -> int | None:
    """The CPU this process last ran on (Linux ``/proc/self/stat``), or None."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[36])
    except (OSError, IndexError, ValueError):
        return None


def pin_to_one_cpu(cpu: int | None = None) -> int | None:
    """Bind this process to ``cpu`` (default: the one it runs on) when it may use several.

    Returns the CPU it is bound to, or None when affinity is not available."""
    try:
        cpus = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return None
    if len(cpus) == 1:
        return next(iter(cpus))
    if cpu is None:
        cpu = current_cpu()
    if cpu not in cpus:
        return None
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return None
    return cpu


def usable_cpus() -> int:
    """How many CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
