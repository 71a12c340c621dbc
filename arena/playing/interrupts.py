"""SIGTERM handled as Ctrl-C, and a closed stdout handled as the reader's choice.

``kill PID`` (SIGTERM, what service managers, ``timeout`` and batch systems send) must
not lose work that Ctrl-C would keep: while a command runs, SIGTERM raises
:class:`Terminated`, a ``KeyboardInterrupt``, so every path that keeps partial results on
Ctrl-C keeps them on SIGTERM too. The exit status is ``128 + signal number`` (130 for
Ctrl-C, 143 for SIGTERM), as a shell reports a process stopped by that signal.

A closed stdout (``arena play ... | head -1``) is not an error of the user's input:
:func:`stdout_closed` tells it apart from other broken pipes, and :func:`quiet_stdout`
points stdout at ``/dev/null`` so that Python's final flush stays quiet.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C half of signal (no stub)
import os
import select
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Exit status after stdout was closed by its reader: that of a process stopped by SIGPIPE.
SIGPIPE_STATUS = 128 + 13


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived; handled wherever Ctrl-C is."""

    signum = signal.SIGTERM


def exit_status(exc: BaseException | None = None, signum: int | None = None) -> int:
    """``128 + signal number`` for an interruption (``KeyboardInterrupt`` alone: Ctrl-C, 130)."""
    if signum is None:
        signum = getattr(exc, "signum", signal.SIGINT)
    return 128 + int(signum)


def signal_word(signum: int) -> str:
    """``interrupted`` (Ctrl-C) or ``terminated`` (SIGTERM), for messages."""
    return "terminated" if signum == signal.SIGTERM else "interrupted"


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated("terminated")


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` (main thread only; a SIGTERM
    that was ignored when we started, as under ``nohup``-like launchers, stays ignored)."""
    old: Any = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        old = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


_active: list[bool] = []  # an interruptible block is running (main thread)
#: The signals :func:`interrupts_deferred` holds, as plain numbers.
_HELD = (int(signal.SIGINT), int(signal.SIGTERM))


def _redeliver(signum: int) -> None:
    """Deliver ``signum`` again through the handler in force now (an ignored one stays ignored)."""
    handler = signal.getsignal(signum)
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        signal.raise_signal(signum)


@contextmanager
def _holding(caught: list[int]) -> Iterator[bool]:
    """Ctrl-C and SIGTERM appended to ``caught`` while the block runs (main thread only: yields
    False elsewhere, where signals never arrive); the old handlers back at its end."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return

    def hold(signum: int, frame: Any) -> None:
        caught.append(signum)

    # The C functions, not signal.signal/getsignal: those convert every handler to and from an
    # enum, which cost ~70 µs a game of `arena play` (this runs once a game); same handlers.
    # A signal ignored when we start (``nohup``, a background job) stays ignored.
    kept = [s for s in _HELD if _signal.getsignal(s) != _signal.SIG_IGN]
    old = {s: _signal.signal(s, hold) for s in kept}
    try:
        yield True
    finally:
        for signum, handler in old.items():
            _signal.signal(signum, handler)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while the block runs, then raise them at its end.

    For the steps that must happen together (a game's record written and its result
    tallied): an interruption between them would leave a record the results lack.
    Main thread only (elsewhere a no-op, as signals reach only the main thread).
    """
    caught: list[int] = []
    with _holding(caught):
        yield
    if caught:  # re-deliver the first one through the handlers in force again
        _redeliver(caught[0])


#: Signals caught inside :func:`interruptible` blocks and not yet re-delivered.
_requested: list[int] = []


def requested() -> bool:
    """True while an :func:`interruptible` block holds a Ctrl-C or SIGTERM: C code polling
    this (SQLite's progress handler) stops at once."""
    return bool(_requested)


@contextmanager
def interruptible() -> Iterator[None]:
    """Make Ctrl-C and SIGTERM stop C code that polls :func:`requested` while the block runs.

    Python runs a signal handler only between bytecodes, never while SQLite works, and an
    exception raised in SQLite's progress handler is swallowed. So inside the block a
    signal only sets the flag :func:`requested` reads (the progress handler then makes
    SQLite stop), and it is re-delivered at the block's end, whether the block ended
    normally or raised (SQLite's "interrupted"): ``KeyboardInterrupt`` or
    :class:`Terminated` as anywhere else. Nested blocks share the outer one's; main
    thread only (elsewhere a no-op, as signals reach only the main thread).
    """
    if _active or threading.current_thread() is not threading.main_thread():
        yield
        return
    _active.append(True)
    try:
        with _holding(_requested):
            yield
    finally:
        _active.clear()
        if _requested:
            signum = _requested[0]
            _requested.clear()
            _redeliver(signum)


def stdout_closed() -> bool:
    """True when stdout is a pipe or socket whose reader has gone."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def quiet_stdout() -> None:
    """Point stdout at ``/dev/null``: what is still buffered is dropped without a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
