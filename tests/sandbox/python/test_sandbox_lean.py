"""The lean per-move path keeps every check (issue 19, item 3).

* the view a sandboxed seat sends is a :class:`~arena.sandbox.python.protocol.MoveView`'s fields, in
  its order, as the plain tuple marshal carries (no NamedTuple made), and matches the move;
* a game process's first message must still be its layers, though the per-message path no
  longer tests for it (``GameProcess.recv`` is swapped after the first);
* a step is still read as ``[kind, actions, *rest]`` with every malformed shape refused;
* bot namespaces copy their builtins from one dict made once: each still gets its own
  guards and helpers, and none writes into what the others copy.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arena.game.cards import Card
from arena.game.referee import Referee
from arena.game.rules import CONTEST
from arena.sandbox import Limits, SandboxFactory
from arena.sandbox.policy import namespace as namespace_module
from arena.sandbox.policy.namespace import BotNamespace, OutputSink
from arena.sandbox.python.process import GameProcess, ProtocolViolation, Template, _live, _watchdog
from arena.sandbox.python.protocol import HEADER, MoveView
from arena.trust.botsource import read_bot_file

HERE = Path(__file__).parent
LIMITS = Limits(move_seconds=2.0, game_seconds=30.0, load_seconds=5.0, startup_seconds=30.0, wall_factor=60.0)


def test_the_view_sent_is_a_move_views_fields_in_order(greedy: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[Any] = []
    real_send = GameProcess.send

    def spy(self: GameProcess, message: Any, fds: Any = None) -> None:
        if type(message) is tuple and message and message[0] == "move":
            sent.append(message[1])
        real_send(self, message, fds)

    monkeypatch.setattr(GameProcess, "send", spy)
    factory = SandboxFactory(read_bot_file(str(HERE.parents[2] / "bots" / "heuristic.py")), LIMITS)
    try:
        seats = [factory(5, 0), greedy(5, 1), greedy(5, 2)]
        try:
            outcome = Referee(CONTEST).play(seats, seed=5)
        finally:
            for p in seats:
                p.close()
    finally:
        factory.close()
    assert outcome.faults == []
    assert sent
    pile_seen = False
    for fields in sent:
        assert type(fields) is tuple and len(fields) == len(MoveView._fields)
        view = MoveView._make(fields)
        assert view.seat == 0
        assert all(type(c) is str and Card(c)._text == c for c in [*view.hand, view.top, *view.put])
        assert view.suit in ("s", "c", "h", "d")
        assert type(view.first) is bool and type(view.stock) is int and type(view.pile_size) is int
        assert type(view.counts) is list and len(view.counts) == 3 * 3 and view.counts[0] == len(view.hand)
        assert view.history is None  # heuristic.py reads the pile, not the history
        pile_seen = pile_seen or view.pile is not None
        assert view.forced is None or type(view.forced) is str
    assert pile_seen  # from its first read of turn.pile on, the pile rides with every view


class _Template:
    """What a GameProcess asks of its template (here, nothing is forked)."""

    def __init__(self) -> None:
        self.limits = Limits()
        self.doomed: list[int] = []

    def exit_code(self, pid: int, wait: float) -> None:
        return None


def _process() -> tuple[GameProcess, int]:
    """A GameProcess whose replies this test writes (its pid and clock are this process's own)."""
    theirs_r, ours_w = os.pipe()
    ours_r, theirs_w = os.pipe()
    err_r, err_w = os.pipe()
    os.close(theirs_r)
    os.close(err_w)
    proc = GameProcess(_Template(), os.getpid(), ours_w, ours_r, err_r)  # type: ignore[arg-type]
    proc.killed = True  # never signal this process: the test's own pid stands in
    return proc, theirs_w


def _close(proc: GameProcess, *more: int) -> None:
    _watchdog.forget(proc)
    _live.discard(proc)
    for fd in (*more, proc.fd_w, proc.fd_r, proc.fd_e):
        os.close(fd)


def _write(fd: int, message: Any) -> None:
    payload = json.dumps(message, separators=(",", ":")).encode()
    os.write(fd, HEADER.pack(len(payload)) + payload)


def test_the_first_message_must_be_the_layers_and_only_the_first() -> None:
    proc, w = _process()
    _write(w, ["done", [], None])
    os.close(w)  # nothing follows: a missing check would read on to the end of the pipe
    try:
        with pytest.raises(ProtocolViolation, match="not the process's layers"):
            proc.recv()
    finally:
        _close(proc)
    proc, w = _process()
    try:
        _write(w, ["layers", {"seccomp": "active"}])
        _write(w, ["done", [["f"]], None])
        _write(w, ["layers", {"seccomp": "forged"}])
        assert proc.recv() == ["done", [["f"]], None]
        assert proc.report == {"seccomp": "active"}
        assert (proc.turn_messages, proc.turn_bytes) == (1, len('["done",[["f"]],null]'))  # layers not counted
        assert proc.recv() == ["layers", {"seccomp": "forged"}]  # later: a message like any (refused as a step)
        assert proc.report == {"seccomp": "active"}
    finally:
        _close(proc, w)


GARBAGE_STEPS = [
    ({"a": 1}, "a malformed message"),
    (["done"], "a malformed message"),
    (["done", "not a list", None], "a malformed message"),
    ("done", "a malformed message"),
    (None, "a malformed message"),
    (["done", []], "a malformed done message"),
    (["done", [], None, "extra"], "a malformed done message"),
    (["draw", [], "extra"], "a malformed 'draw' message"),
    (["hist", [], None], "a malformed 'hist' message"),
    (["nonsense", []], "an unknown message 'nonsense'"),
]

#: Tests only (the template takes the ``raw`` message): from now on this game process answers
#: every move with the step ``STEP``, as a bot that escaped the code policy could.
_ANSWER_WITH = """
import arena.sandbox.python.botloop as W
def on_move(self, fields):
    return STEP
W.GameLoop.on_move = on_move
result = True
"""


class _RawFactory(SandboxFactory):
    """Game processes that take the test-only ``raw`` message."""

    def _template(self) -> Template:
        with self.lock:
            if self.template is None or self.template.dead:
                self.template = Template(self.src, self.limits, raw_ok=True)
            return self.template


@pytest.fixture(scope="module")
def raw_factory() -> Any:
    factory = _RawFactory(read_bot_file(str(HERE.parents[2] / "bots" / "random.py")), LIMITS)
    yield factory
    factory.close()


@pytest.mark.parametrize("step, why", GARBAGE_STEPS, ids=[json.dumps(s) for s, _ in GARBAGE_STEPS])
def test_every_malformed_step_is_a_protocol_violation(greedy: Any, raw_factory: Any, step: Any, why: str) -> None:
    """A game process answering its move with one malformed step: a crash fault naming it."""
    seat = raw_factory(1, 0)
    start_game = seat.start_game

    def start_and_answer_with_step(info: Any) -> None:
        start_game(info)
        assert seat.worker is not None
        reply, _ = seat.worker.call(("raw", f"STEP = {step!r}\n" + _ANSWER_WITH), 5.0, 5.0, "raw")
        assert reply == ["raw", "True"]

    seat.start_game = start_and_answer_with_step  # type: ignore[method-assign]
    seats = [seat, greedy(1, 1)]
    try:
        outcome = Referee(CONTEST).play(seats, seed=1)
    finally:
        for p in seats:
            p.close()
    first = outcome.faults[0]
    assert (first.seat, first.kind.value) == (0, "crash")
    assert f"protocol violation: {why}" in first.detail


def test_namespaces_copy_the_shared_builtins_and_keep_their_own_guards() -> None:
    one, two = BotNamespace(1, OutputSink()), BotNamespace(2, OutputSink())
    per_namespace = set(namespace_module._PER_NAMESPACE)
    assert list(one.builtins) == list(two.builtins)
    for name, value in one.builtins.items():
        if name in per_namespace:
            assert value is not None and value is not two.builtins[name], name
        else:
            assert value is two.builtins[name], name
    assert one.builtins is not two.builtins
    for name in ("_getattr_", "_write_", "_print_", "__metaclass__", "_vet_", "_classes_"):
        assert one.guards[name] is not two.guards[name], name
    one.builtins["len"] = "changed"  # a namespace's dict is its own copy
    assert two.builtins["len"] is len
    assert BotNamespace(3, OutputSink()).builtins["len"] is len
    assert all(namespace_module._STATIC[name] is None for name in per_namespace)
    # the bots' getattr still checks its computed names, per namespace
    with pytest.raises(AttributeError):
        one.builtins["getattr"](one, "__class__")
