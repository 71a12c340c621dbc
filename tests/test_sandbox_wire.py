"""The referee's side of the sandbox wire: the strict reply decoder and the lock-free watchdog."""

from __future__ import annotations

import time

import pytest

from arena.sandbox.client import _NEVER, _decode, _Watchdog


@pytest.mark.parametrize("text, value", [
    ('["done",[["p","10h",null],["f"]],null]', ["done", [["p", "10h", None], ["f"]], None]),
    ('["ok",[],null,null,["end_round"]]', ["ok", [], None, None, ["end_round"]]),
    ('"x"', "x"),
])
def test_the_decoder_reads_one_json_value(text: str, value: object) -> None:
    assert _decode(text) == value


@pytest.mark.parametrize("text", ["", " [1]", "[1] ", "[1]x", '[1][2]', "[", "{'a': 1}", "\x00", "[1,]"])
def test_the_decoder_refuses_anything_but_exactly_one_json_value(text: str) -> None:
    with pytest.raises(ValueError):
        _decode(text)


class _FakeWorker:
    def __init__(self) -> None:
        self.deadline = _NEVER
        self.timed_out = False
        self.kills = 0

    def signal_kill(self) -> None:
        self.kills += 1


def test_disarm_reports_late_from_its_own_clock_even_before_the_thread_looks() -> None:
    worker = _FakeWorker()
    start = time.monotonic() - 1.0          # "sent" a second ago, budget 0.5 s
    _Watchdog.arm(worker, start + 0.5)      # type: ignore[arg-type]
    in_time, took = _Watchdog.disarm(worker, start, 0.5)  # type: ignore[arg-type]
    assert not in_time and took >= 1.0 and worker.deadline == _NEVER
    start = time.monotonic()
    _Watchdog.arm(worker, start + 10.0)     # type: ignore[arg-type]
    assert _Watchdog.disarm(worker, start, 10.0)[0] is True  # type: ignore[arg-type]


def test_the_thread_kills_a_worker_past_its_deadline_once_and_disarm_then_says_late() -> None:
    dog = _Watchdog()
    late, idle = _FakeWorker(), _FakeWorker()
    dog.watch(late)  # type: ignore[arg-type]
    dog.watch(idle)  # type: ignore[arg-type]
    start = time.monotonic()
    late.deadline = start + 0.01
    for _ in range(200):
        if late.kills:
            break
        time.sleep(0.01)
    time.sleep(3 * dog.PERIOD)
    assert late.kills == 1 and late.timed_out
    assert idle.kills == 0 and not idle.timed_out  # an idle worker (deadline never) is left alone
    assert _Watchdog.disarm(late, start, 10.0)[0] is False  # type: ignore[arg-type]
    dog.forget(late)  # type: ignore[arg-type]
    assert id(late) not in dog.workers
