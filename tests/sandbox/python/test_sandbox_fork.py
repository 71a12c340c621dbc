"""The cheap fork path of the sandbox: what a bot's template prepares once, and that every
game process still gets, and truthfully reports, every layer (arena/sandbox/python/zygote.py)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.game.referee import Referee
from arena.game.rules import CONTEST
from arena.sandbox import Limits, SandboxFactory, hardening_report
from arena.sandbox.jail.harden import LAYERS
from arena.sandbox.jail.seccomp import _INSN, _PID_PLACEHOLDER, PreparedFilter, export_program
from arena.sandbox.policy import compiler as policy
from arena.sandbox.policy.namespace import BotNamespace
from arena.sandbox.python import process
from arena.seats.loader import load_trusted, resolve_bot
from arena.trust.botsource import BotSource

if not sys.platform.startswith("linux"):
    pytest.skip("game processes are forked from a template on Linux only", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[3]
LIMITS = Limits(move_seconds=0.5, game_seconds=10.0, load_seconds=2.0)

#: Draws from its random at module level, in Bot() and in start_game, and says what it drew
#: and which rules it was given.
DRAWER = """
import random

AT_LOAD = [random.random() for _ in range(3)]


class Bot:
    def __init__(self):
        self.made = random.randrange(10**9)
        self.started = None

    def start_game(self, info):
        self.size = info.rules.hand_size
        self.started = random.random()

    def move(self, turn):
        if self.started is not None:
            turn.say("drew %r %r %r size %d" % (AT_LOAD, self.made, self.started, self.size))
            self.started = None
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0], "h" if options[0].rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
"""


def test_a_template_holds_nothing_of_the_referee_side() -> None:
    """Every module a template holds is copied (its page tables) into every fork and torn
    down with every game process: the template's import graph holds none of the referee's."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import arena.sandbox.python.zygote; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, str(ROOT)], capture_output=True, text=True, check=True, env={}, timeout=60
    )
    modules = set(json.loads(out.stdout))
    assert "arena.sandbox.python.botloop" in modules and "arena.sandbox.policy.compiler" in modules  # the scan works
    held = modules & {
        "threading",
        "subprocess",
        "pyseccomp",
        "ctypes.util",
        "tempfile",
        "shutil",
        "socket",
        "selectors",
        "hashlib",
        "hmac",
        "secrets",
        "arena.sandbox.python.factory",
        "arena.sandbox.python.process",
        "arena.sandbox.jail.watchdog",
    }
    assert held == set()


def test_a_prebuilt_namespace_gives_the_bot_the_same_random_as_a_fresh_one() -> None:
    src = BotSource("drawer", DRAWER)
    code = policy.compile_bot(src)
    fresh = policy.instantiate(code, src, 424242)
    space = BotNamespace(0)  # as a template builds it, before the game's seed is known
    prebuilt = policy.instantiate(code, src, 424242, space=space)
    assert prebuilt.made == fresh.made
    other = policy.instantiate(code, src, 7)
    assert other.made != fresh.made
    with pytest.raises(RuntimeError):  # a namespace serves one bot instance only
        space.take(424242)


def _says(factory: SandboxFactory, rules: Any = CONTEST) -> list[str]:
    """What seat 0 (the sandboxed bot) says in game 5 against greedy."""
    other = load_trusted(resolve_bot("greedy"))
    players = [factory(5, 0), other(5, 1)]
    try:
        outcome = Referee(rules).play(players, seed=5)
    finally:
        for p in players:
            p.close()
    assert outcome.faults == []
    return [e["text"] for e in outcome.log if e.get("event") == "say" and e.get("seat") == 0]


def test_sandboxed_seeds_and_rules_are_the_games_own() -> None:
    """The template parses the contest's rules and builds the namespace before any game: a
    game with other rules gets those, and each seed its own stream, as in process."""
    factory = SandboxFactory(BotSource("drawer", DRAWER), LIMITS)
    try:
        contest = _says(factory)
        again = _says(factory)
        short = _says(factory, dataclasses.replace(CONTEST, hand_size=4))
    finally:
        factory.close()
    assert contest and contest == again  # the same game, the same draws: nothing kept between games
    assert contest[0].endswith("size 5") and short[0].endswith("size 4")
    src = BotSource("drawer", DRAWER)
    seed = factory(5, 0).seed
    bot = policy.instantiate(policy.compile_bot(src), src, seed)
    assert contest[0].startswith(f"drew {bot_draws(src, seed)!r} {bot.made!r}")


def bot_draws(src: BotSource, seed: int) -> list[float]:
    """What the bot draws at load with ``seed``, in process."""
    ns = BotNamespace(seed)
    scope = ns.globals()
    exec(policy.compile_bot(src), scope)  # noqa: S102 - our own test bot, under the code policy
    return list(scope["AT_LOAD"])


@pytest.fixture(scope="module")
def machine() -> dict[str, str]:
    return hardening_report().layers


def test_every_layer_is_reported_where_it_is_taken(machine: dict[str, str]) -> None:
    factory = SandboxFactory(BotSource("drawer", DRAWER), LIMITS)
    try:
        report = factory.report
    finally:
        factory.close()
    for name in LAYERS:
        assert report["layers"][name] == machine[name], name  # what the machine gives, no more, no less
    notes = report["notes"]
    if machine["rlimits"] == "active":
        assert "in the template, read back" in notes["rlimits"] and "NPROC=0" in notes["rlimits"]
    if machine["no_new_privs"] == "active":
        assert "set in the template, read back" in notes["no_new_privs"]
    if machine["seccomp"] == "active":
        assert "compiled by the referee" in notes["seccomp"]


def test_a_referee_without_a_filter_reports_seccomp_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "export_program", lambda: (None, "pyseccomp not installed (test)"))
    factory = SandboxFactory(BotSource("drawer", DRAWER), LIMITS)
    try:
        assert factory.report["layers"]["seccomp"] == "unavailable: pyseccomp not installed (test)"
        assert _says(factory)  # the game is played, the layer reported missing
    finally:
        factory.close()


def test_a_limit_the_template_cannot_set_fails_the_layer_in_every_game_process(machine: dict[str, str]) -> None:
    if machine["rlimits"] != "active":
        pytest.skip("no rlimits layer on this machine")
    factory = SandboxFactory(BotSource("drawer", DRAWER), dataclasses.replace(LIMITS, memory_bytes=4 * 2**20))
    try:
        state = factory.report["layers"]["rlimits"]
    finally:
        factory.close()
    assert state.startswith("failed:") and "not above" in state, state


def test_a_prepared_filter_takes_only_a_program_with_the_pid_placeholder() -> None:
    program, why = export_program()
    if program is None:
        pytest.skip(why)
    flt = PreparedFilter(program)
    assert flt.slots and all(_INSN.unpack_from(program, i)[3] == _PID_PLACEHOLDER for i in flt.slots)
    for bad in (b"", program[:-1], program.replace(_PID_PLACEHOLDER.to_bytes(4, sys.byteorder), b"\0\0\0\0")):
        with pytest.raises(ValueError):
            PreparedFilter(bad)


#: An escaped bot (no code policy) that, while its module loads, rewrites every hardening
#: report it can reach in its process (attributes and locals of every frame up the stack),
#: and then sends an answer of its own carrying a report that claims every layer.
FORGER = """
import json, os, struct, sys

FORGED = {"layers": {name: "active" for name in ("workdir", "netns", "uid", "rlimits", "no_new_privs", "seccomp")},
          "notes": {"seccomp": "FORGED"}}

def _forge(value):
    if isinstance(value, dict) and "layers" in value:
        value.clear()
        value.update(FORGED)
    if hasattr(value, "report"):
        try:
            value.report = dict(FORGED)
        except Exception:
            pass

frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()):
        _forge(value)
    frame = frame.f_back
reply = json.dumps(["ok", [], None, None, [], FORGED]).encode()
for fd in range(3, 12):
    try:
        os.write(fd, struct.pack(">I", len(reply)) + reply)
    except OSError:
        pass

class Bot:
    def move(self, turn):
        pass
"""


def test_an_escaped_bot_cannot_forge_the_hardening_report(machine: dict[str, str]) -> None:
    # The game process writes its layers before any bot code runs; the referee takes them from
    # that first message, not from anything the process says after the bot's module ran.
    factory = SandboxFactory(BotSource("forger", FORGER), LIMITS, escaped_for_tests=True)
    try:
        report = factory.report
    finally:
        factory.close()
    assert "FORGED" not in json.dumps(report)
    for name in LAYERS:
        assert report["layers"][name] == machine[name], name
