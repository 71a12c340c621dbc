"""The referee's side of the sandbox wire: the strict reply decoder and the lock-free watchdog."""

from __future__ import annotations

import os
import time

import pytest

from arena.sandbox.limits import cpu_clock, cpu_seconds
from arena.sandbox.python.process import _NEVER, _Watchdog
from arena.sandbox.python.protocol import decode as _decode


@pytest.mark.parametrize(
    "text, value",
    [
        ('["done",[["p","10h",null],["f"]],null]', ["done", [["p", "10h", None], ["f"]], None]),
        ('["ok",[],null,null,["end_round"]]', ["ok", [], None, None, ["end_round"]]),
        ('"x"', "x"),
    ],
)
def test_the_decoder_reads_one_json_value(text: str, value: object) -> None:
    assert _decode(text) == value


@pytest.mark.parametrize("text", ["", " [1]", "[1] ", "[1]x", "[1][2]", "[", "{'a': 1}", "\x00", "[1,]"])
def test_the_decoder_refuses_anything_but_exactly_one_json_value(text: str) -> None:
    with pytest.raises(ValueError):
        _decode(text)


class _FakeWorker:
    """Watched like a game process; its CPU clock is this process's own."""

    def __init__(self) -> None:
        self.deadline = _NEVER
        self.cpu_deadline = _NEVER
        self.clock = cpu_clock(os.getpid())
        self.timed_out = False
        self.kills = 0

    def signal_kill(self) -> None:
        self.kills += 1


def test_a_process_cpu_clock_reads_by_pid() -> None:
    clock = cpu_clock(os.getpid())
    before = cpu_seconds(clock)
    end = time.process_time() + 0.02
    while time.process_time() < end:
        pass
    assert cpu_seconds(clock) - before >= 0.015


def test_the_thread_kills_a_worker_past_its_wall_deadline_once_and_leaves_idle_ones() -> None:
    dog = _Watchdog()
    late, idle = _FakeWorker(), _FakeWorker()
    dog.watch(late)  # type: ignore[arg-type]
    dog.watch(idle)  # type: ignore[arg-type]
    late.deadline = time.monotonic() + 0.01
    for _ in range(200):
        if late.kills:
            break
        time.sleep(0.01)
    time.sleep(3 * dog.PERIOD)
    assert late.kills == 1 and late.timed_out
    assert idle.kills == 0 and not idle.timed_out  # an idle worker (deadline never) is left alone
    dog.forget(late)  # type: ignore[arg-type]
    assert id(late) not in dog.workers


def test_the_thread_kills_on_cpu_time_not_on_waiting() -> None:
    dog = _Watchdog()
    waiting, burning = _FakeWorker(), _FakeWorker()
    burning.clock = waiting.clock = cpu_clock(os.getpid())
    dog.watch(waiting)  # type: ignore[arg-type]
    dog.watch(burning)  # type: ignore[arg-type]
    now = cpu_seconds(burning.clock)
    waiting.deadline = burning.deadline = time.monotonic() + 60  # generous wall-clock backstops
    waiting.cpu_deadline = now + 1000.0
    burning.cpu_deadline = now + 0.05
    end = time.monotonic() + 10
    while not burning.kills and time.monotonic() < end:
        pass  # burn this process's CPU (the clock both fakes read)
    assert burning.kills == 1 and burning.timed_out
    assert waiting.kills == 0
    dog.forget(waiting)  # type: ignore[arg-type]
    dog.forget(burning)  # type: ignore[arg-type]
