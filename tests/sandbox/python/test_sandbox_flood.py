"""Every message from a bot is bounded and billed (docs/security/jail.md, "Bot messages are bounded and billed").

The flooding bots of tests/sandbox/python/hostile/escaped/ (noop_flood, big_reply, say_flood_raw, split_actions,
print_past_limit, long_say, padded_request, deep_json, huge_int) play in test_hostile.py at the
default limits. Here: the referee's reading is bounded before it reads (a message's length header,
a turn's totals), the decoder refuses what is costly to decode, the bounds a bot reaches only by
spreading over several messages (bytes and messages of a turn) are reached with smaller limits,
and the referee's CPU spent on a seat is taken from its bank and faulted past its bound.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest
from test_hostile import HOSTILE_SEAT, PATIENT, assert_contained

from arena.game.referee import GameOutcome, Referee
from arena.game.rules import CONTEST
from arena.sandbox import Limits, SandboxFactory
from arena.sandbox.python.process import ProtocolViolation, WorkerError, _Endpoint
from arena.sandbox.python.protocol import HEADER, MAX_INT_DIGITS
from arena.sandbox.python.protocol import decode as _decode
from arena.sandbox.python.seat import SandboxedSeat
from arena.trust.botsource import BotSource

ESCAPED = Path(__file__).parent / "hostile" / "escaped"
SEED = 11


# -- the decoder -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "NaN",
        '["done",[],Infinity]',
        "[-Infinity]",
        "[" + "7" * (MAX_INT_DIGITS + 1) + "]",
        "-" + "1" * 5000,
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 50_000 + "1" + "}" * 50_000,
    ],
    ids=["nan", "infinity", "minus-infinity", "long-int", "huge-int", "deep-lists", "deep-objects"],
)
def test_the_decoder_refuses_what_costs_to_decode(text: str) -> None:
    with pytest.raises((ValueError, RecursionError)):
        _decode(text)


def test_the_decoder_reads_the_integers_the_protocol_carries() -> None:
    assert _decode("[" + "9" * MAX_INT_DIGITS + ",-12,0,1.5e300]") == [int("9" * MAX_INT_DIGITS), -12, 0, 1.5e300]
    assert _decode('["s","\\ud800"]') == ["s", "\ud800"]  # a lone surrogate is a string; clean() replaces it


# -- bounded reading ---------------------------------------------------------------------------


class _Pipe(_Endpoint):
    """The referee's reading end over a plain pipe."""

    def __init__(self, max_reply: int, max_turn_bytes: int = 1 << 62, max_turn_messages: int = 1 << 62) -> None:
        self.fd_r, self.fd_w = os.pipe()
        self.max_reply = max_reply
        self.max_turn_bytes = max_turn_bytes
        self.max_turn_messages = max_turn_messages
        self.buf = b""
        self.timed_out = False

    def put(self, message: Any) -> None:
        payload = json.dumps(message, separators=(",", ":")).encode()
        os.write(self.fd_w, HEADER.pack(len(payload)) + payload)

    def left(self) -> int:
        """Bytes still in the pipe (not read by the referee)."""
        os.set_blocking(self.fd_r, False)
        n = 0
        try:
            while data := os.read(self.fd_r, 1 << 16):
                n += len(data)
        except BlockingIOError:
            pass
        return n

    def _died(self) -> WorkerError:
        return WorkerError("gone")

    def close(self) -> None:
        os.close(self.fd_r)
        os.close(self.fd_w)


def test_a_message_over_the_limit_is_refused_from_its_header_before_its_body_is_read() -> None:
    pipe = _Pipe(max_reply=1024)
    try:
        body = b"x" * 60_000  # fits in the pipe; the header announces far more
        os.write(pipe.fd_w, HEADER.pack(8_000_000) + body)
        with pytest.raises(ProtocolViolation, match="a reply of 8000000 bytes"):
            pipe.recv()
        assert len(pipe.buf) <= 4096 and pipe.left() >= len(body) + 4 - 4096
    finally:
        pipe.close()


def test_a_turns_bytes_and_messages_are_counted_over_its_messages() -> None:
    pipe = _Pipe(max_reply=1024, max_turn_bytes=150)
    try:
        for _ in range(2):
            pipe.put(["draw", [["o", "x" * 80]]])  # 100 bytes: each under 150, not both
        assert pipe.recv()[0] == "draw"
        with pytest.raises(ProtocolViolation, match="bytes of messages in a turn"):
            pipe.recv()
    finally:
        pipe.close()
    pipe = _Pipe(max_reply=1024, max_turn_messages=3)
    try:
        for _ in range(4):
            pipe.put(["draw", []])
        for _ in range(3):
            pipe.recv()
        with pytest.raises(ProtocolViolation, match="more than 3 messages in a turn"):
            pipe.recv()
        pipe.buf = b""  # (what was read of the refused message: its worker is killed in play)
        pipe.turn_bytes = pipe.turn_messages = 0  # a new turn (what GameProcess.begin does)
        pipe.put(["done", [], None])
        assert pipe.recv() == ["done", [], None]
    finally:
        pipe.close()


# -- whole games: spreading over messages, and the referee's CPU ---------------------------------


def play(name: str, greedy: Any, limits: Limits) -> tuple[GameOutcome, SandboxedSeat]:
    path = ESCAPED / f"{name}.py"
    factory = SandboxFactory(BotSource(name, path.read_text(), str(path)), limits, escaped_for_tests=True)
    hostile = factory(SEED, HOSTILE_SEAT)
    players = [greedy(SEED, 0), hostile, greedy(SEED, 2)]
    try:
        outcome = Referee(CONTEST).play(players, seed=SEED, bots=["greedy", name, "greedy"])
    finally:
        for p in players:
            p.close()
        factory.close()
    return outcome, hostile


def hostile_fault(outcome: GameOutcome, kind: str) -> str:
    assert_contained(outcome, {"clean": False, "kinds": {kind}, "retired": True})
    return next(f.detail for f in outcome.faults if f.seat == HOSTILE_SEAT and f.kind == kind)


@pytest.mark.parametrize(
    "change, words",
    [
        ({"max_turn_bytes": 32 * 1024}, "bytes of messages in a turn (limit 32768)"),
        ({"max_turn_messages": 1}, "more than 1 messages in a turn"),
    ],
    ids=["bytes", "messages"],
)
def test_a_turn_spread_over_messages_is_bounded_as_a_whole(greedy: Any, change: dict[str, int], words: str) -> None:
    """split_bytes sends 24 KB on a draw request and 24 KB with its answer: under the per-message
    limit each time, over a turn limit of 32 KiB (or of one message) together."""
    detail = hostile_fault(play("split_bytes", greedy, dataclasses.replace(PATIENT, **change))[0], "crash")
    assert words in detail and "; referee CPU " in detail


def test_the_referee_cpu_spent_on_a_seat_is_faulted_past_its_bound(greedy: Any) -> None:
    """padded_replies stays under every bound of a turn; with the referee's CPU per turn bounded
    to 10 µs (a turn costs the referee at least that), its first turn is faulted, as a timeout."""
    outcome, _ = play("padded_replies", greedy, dataclasses.replace(PATIENT, referee_turn_seconds=1e-5))
    detail = hostile_fault(outcome, "timeout")
    assert "of the referee's CPU in a turn (limit 0.01 ms)" in detail, detail


def test_the_referee_cpu_spent_on_a_seat_is_taken_from_its_bank(greedy: Any) -> None:
    outcome, hostile = play("padded_replies", greedy, PATIENT)
    assert [f for f in outcome.faults if f.seat == HOSTILE_SEAT] == []
    assert hostile.referee_cpu > 0 and len(hostile.cpu_times) > 3
    assert hostile.bank == pytest.approx(PATIENT.game_seconds - hostile.cpu_total - hostile.referee_cpu)
