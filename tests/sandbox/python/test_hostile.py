"""The hostile-bot suite: every bot in tests/sandbox/python/hostile/ attacks, and every attack is contained.

Each bot file says what must happen in its docstring:

* ``expect: load`` -- refused before any game (a one-line :class:`BotLoadError`);
* ``expect: faults=K1,K2 [retired|retired?]`` -- the game completes, the hostile seat has
  faults of those kinds only (at least one), and is retired (or not, or either);
* ``expect: clean`` -- the game completes and nobody faults;
* ``check: ...`` -- extra assertions (no leaked state, capped output...).

In every game the hostile bot sits at seat 1 between two trusted greedy bots, and
the other seats must be unaffected: no faults, not retired, placed ahead of a
retired hostile seat, and the whole record passes the independent rules checker.
Bots in tests/sandbox/python/hostile/escaped/ run with layer 1 switched off (a test-only switch)
to show what layer 2, the hardened worker, contains on its own.
"""

from __future__ import annotations

import dataclasses
import os
import re
import secrets
import socket
from pathlib import Path
from typing import Any

import pytest

from arena.errors import BotLoadError
from arena.game.referee import GameOutcome, Referee
from arena.game.rules import CONTEST
from arena.records.files import format_game
from arena.sandbox import Limits, SandboxFactory, hardening_report
from arena.seats.loader import resolve_bot
from arena.trust.botsource import BotSource, read_bot_file
from arena.verify import check_lines

HERE = Path(__file__).parent / "hostile"
BOTS = sorted(p for p in HERE.glob("*.py"))
ESCAPED = sorted(p for p in (HERE / "escaped").glob("*.py"))
LIMITS = Limits(move_seconds=0.3, game_seconds=6.0, load_seconds=1.5, startup_seconds=30.0)
#: For a bot not expected to time out: CPU limits it cannot reach by honest work (2 s a move, 30 s a
#: game) and a wall-clock backstop (2 s x 60 + 1 s a move) no loaded machine reaches. With LIMITS,
#: huge_return (100 MB a move: 70 ms of CPU on a quiet machine, page faults included) was stopped
#: by the 0.3 s CPU limit in 3 of some 20 runs of a busy hour, and at -n 3 by the 2.5 s backstop,
#: as was memory_creep: verdicts of the machine's load, not of the bot. Bots that burn or wait,
#: the ones the limits are for, expect a timeout and keep LIMITS.
PATIENT = dataclasses.replace(LIMITS, move_seconds=2.0, game_seconds=30.0, wall_factor=60.0)
HOSTILE_SEAT = 1
SEED = 11
SECRET = "arena-secret-" + secrets.token_hex(8)
CARD = re.compile(r"(?<![0-9a-z])(10|[6-9jqka])[schd](?![a-z0-9])")


def expectation(path: Path) -> dict[str, Any]:
    doc = path.read_text().split('"""')[1]
    expect = re.search(r"^expect: (.*)$", doc, re.M)
    assert expect, f"{path.name}: no 'expect:' line"
    check = re.search(r"^check: (.*)$", doc, re.M)
    words = expect.group(1).split()
    spec: dict[str, Any] = {
        "load": words[0] == "load",
        "clean": words[0] == "clean",
        "kinds": set(),
        "retired": None,
        "checks": check.group(1).split() if check else [],
    }
    for word in words:
        if word.startswith("faults="):
            spec["kinds"] = set(word[len("faults=") :].split(","))
        elif word == "retired":
            spec["retired"] = True
        elif word == "retired?":
            spec["retired"] = "either"
    if spec["kinds"] and spec["retired"] is None:
        spec["retired"] = "either" if "retired" not in words else True
    return spec


def limits_for(spec: dict[str, Any]) -> Limits:
    """LIMITS for a bot expected to time out, else PATIENT (its backstop out of reach)."""
    return LIMITS if "timeout" in spec["kinds"] else PATIENT


def play(
    src: BotSource, greedy: Any, *, escaped: bool = False, seed: int = SEED, limits: Limits = LIMITS
) -> GameOutcome:
    factory = SandboxFactory(src, limits, escaped_for_tests=escaped)
    players = [greedy(seed, 0), factory(seed, HOSTILE_SEAT), greedy(seed, 2)]
    try:
        return Referee(CONTEST).play(players, seed=seed, bots=["greedy", src.label, "greedy"])
    finally:
        for p in players:
            p.close()
        factory.close()


def says(outcome: GameOutcome, seat: int = HOSTILE_SEAT, output: bool = False) -> list[str]:
    return [
        e["text"] for e in outcome.log if e["event"] == "say" and e["seat"] == seat and bool(e.get("output")) == output
    ]


def assert_contained(outcome: GameOutcome, spec: dict[str, Any]) -> None:
    """The game completed, the hostile seat faulted as expected, the others are unaffected."""
    log = outcome.log
    assert log[-1]["event"] == "end" and outcome.result is not None
    assert check_lines(log) == []
    hostile = [f for f in outcome.faults if f.seat == HOSTILE_SEAT]
    others = [f for f in outcome.faults if f.seat != HOSTILE_SEAT]
    assert others == [], others
    assert not (outcome.retired - {HOSTILE_SEAT})
    kinds = {f.kind for f in hostile if f.kind != "retired"}
    if spec["clean"]:
        assert hostile == [], hostile
        return
    assert kinds and kinds <= spec["kinds"], (kinds, hostile)
    retired = HOSTILE_SEAT in outcome.retired
    if spec["retired"] is True:
        assert retired, hostile
    if retired:
        places = outcome.result.places
        assert places[HOSTILE_SEAT] == max(places) and all(places[s] < places[HOSTILE_SEAT] for s in (0, 2))
    for f in hostile:
        assert len(f.detail) <= 320


def run_checks(outcome: GameOutcome, spec: dict[str, Any], greedy: Any) -> None:
    said = says(outcome)
    for check in spec["checks"]:
        if check == "no-leak":
            assert not [s for s in said if s.startswith("LEAK")]
        elif check == "no-mutation":
            assert not [s for s in said if s.startswith("MUTATED")]
            assert outcome.log[0]["rules"] == CONTEST.to_dict()
        elif check == "no-stale":
            assert not [s for s in said if s.startswith("STALE")]
        elif check == "errors-public":
            errors = [s for s in said if s.startswith("ERR ")]
            assert errors
            public = {e["card"] for e in outcome.log if e["event"] == "put"}
            for line in errors:
                _, tried, message = line.split(" ", 2)
                named = {m.group(0) for m in CARD.finditer(message)}
                assert named <= {tried} | public, line
        elif check == "same-deals":
            reference = Referee(CONTEST).play([greedy(SEED, s) for s in range(3)], seed=SEED)
            ours = [e for e in outcome.log if e["event"] == "deal"]
            theirs = [e for e in reference.log if e["event"] == "deal"]
            common = min(len(ours), len(theirs))
            assert common >= 1
            assert [(e["hands"], e["stock"]) for e in ours[:common]] == [
                (e["hands"], e["stock"]) for e in theirs[:common]
            ]
        elif check == "output-capped":
            printed = says(outcome, output=True)
            assert printed and printed[0].startswith("flood")
            assert sum(map(len, printed)) <= LIMITS.max_output_bytes + 40
            assert not any(s.startswith("flood") for s in says(outcome, seat=0) + says(outcome, seat=2))
        elif check == "say-capped":
            assert said and all(len(s) <= 200 for s in said)
            per_move: dict[int, int] = {}
            move = 0
            for e in outcome.log:
                if e["event"] == "finish" and e["seat"] == HOSTILE_SEAT:
                    move += 1
                elif e["event"] == "say" and e["seat"] == HOSTILE_SEAT:
                    per_move[move] = per_move.get(move, 0) + 1
            assert max(per_move.values()) <= 20
        elif check == "says-blocked":
            assert said and not [s for s in said if "ESCAPED" in s], said
            assert any(s.startswith("blocked") for s in said)
        elif check == "no-secret":
            assert not [s for s in said if SECRET in s]
        elif check == "terminal-safe":
            # the attack reached the record (kept exact there) and nothing of it reaches a terminal raw
            names = [p["name"] for p in outcome.log[0]["players"]]
            assert all(n.isprintable() and 0 < len(n) <= 40 for n in names), names
            assert any("\x1b" in s or "\n" in s for s in said + says(outcome, output=True))
            lines = list(format_game(outcome.log))
            assert all(line.isprintable() for line in lines), [x for x in lines if not x.isprintable()]
            assert not [x for x in lines if x.lstrip().startswith("greedy") and "forged" in x], "forged log line"
        elif check == "billed":  # a flood's fault shows the referee CPU its turn cost
            billed = [f for f in outcome.faults if f.seat == HOSTILE_SEAT and f.kind in ("crash", "timeout")]
            assert billed and re.search(r"referee(?:'s)? CPU", billed[0].detail), billed
        elif check.startswith("detail="):
            words = check[len("detail=") :].replace("_", " ")
            assert any(words in f.detail for f in outcome.faults if f.seat == HOSTILE_SEAT), outcome.faults
        else:  # pragma: no cover - a typo in a bot's docstring
            raise AssertionError(f"unknown check {check}")


def test_suite_is_large_enough() -> None:
    assert len(BOTS) + len(ESCAPED) >= 30
    assert len(BOTS) >= 30


#: Attacks that burn seconds of CPU on purpose (up to a limit): marked slow.
SLOW = {
    "load_loop",
    "loop_forever",
    "loop_catch_all",
    "memory_creep",
    "big_power",
    "huge_return",
    "never_finishes",
    "idle_burner",
}


def params(paths: list[Path]) -> list[Any]:
    return [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in SLOW else []) for p in paths]


@pytest.mark.parametrize("path", params(BOTS))
def test_hostile_bot_is_contained(path: Path, greedy: Any) -> None:
    spec = expectation(path)
    src = read_bot_file(path)
    if spec["load"]:
        with pytest.raises(BotLoadError) as info:
            SandboxFactory(src, LIMITS)
        assert "\n" not in str(info.value) and len(str(info.value)) < 400
        return
    outcome = play(src, greedy, limits=limits_for(spec))
    assert_contained(outcome, spec)
    run_checks(outcome, spec, greedy)


# -- layer 2 alone: bots that run as if they had escaped the code policy ----------------------


@pytest.fixture(scope="module")
def layers() -> dict[str, str]:
    return hardening_report().layers


@pytest.mark.parametrize("path", params(ESCAPED))
def test_escaped_bot_is_contained_by_the_worker(
    path: Path, greedy: Any, layers: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = expectation(path)
    source = path.read_text()
    listener = None
    target = tmp_path / "escaped.txt"
    monkeypatch.setenv("ARENA_TEST_SECRET", SECRET)
    if "PORT = 0" in source:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(5)
        listener.setblocking(False)
        source = source.replace("PORT = 0", f"PORT = {listener.getsockname()[1]}")
    source = source.replace('PATH = ""', f"PATH = {str(target)!r}")
    if os.path.exists("/tmp/arena-escaped.txt"):
        os.unlink("/tmp/arena-escaped.txt")
    src = BotSource(path.stem, source, str(path))
    outcome = play(src, greedy, escaped=True, limits=limits_for(spec))
    # whatever the exact way it was stopped (killed by seccomp, or refused with an error),
    # the attack had no effect and the game went on
    spec["kinds"] = spec["kinds"] | {"crash", "exception"} if spec["kinds"] else set()
    assert_contained(outcome, spec)
    run_checks(outcome, spec, greedy)
    assert not [s for s in says(outcome) if "ESCAPED" in s]
    assert not target.exists() and not os.path.exists("/tmp/arena-escaped.txt")
    if listener is not None:
        with pytest.raises(BlockingIOError):
            listener.accept()
        listener.close()
    crash = [f for f in outcome.faults if f.kind == "crash"]
    if (
        crash
        and layers.get("seccomp") == "active"
        and path.stem in ("fork", "spawn_shell", "kill_parent", "ptrace_parent")
    ):
        assert "seccomp" in crash[0].detail
    if path.stem in ("oversized_reply", "garbage_reply", "request_flood"):
        assert crash and "protocol violation" in crash[0].detail


@pytest.mark.slow
def test_tournament_of_ordinary_and_hostile_bots(greedy: Any) -> None:
    """Ordinary sandboxed bots and hostile ones, seats rotating: the games complete, the
    ordinary bots never fault and every one of them places ahead of every hostile one."""
    ordinary = [SandboxFactory(resolve_bot(name), LIMITS) for name in ("greedy", "random")]
    hostile = [
        SandboxFactory(read_bot_file(HERE / f"{name}.py"), LIMITS)
        for name in ("loop_forever", "memory_bomb", "raise_systemexit", "print_flood")
    ]
    entrants = ordinary + hostile
    place_sum = [0] * len(entrants)
    played = [0] * len(entrants)
    faults = [0] * len(entrants)
    try:
        for g in range(8):
            chosen = [0, 1, 2 + g % 4, 2 + (g + 1) % 4]
            seated = chosen[g % 4 :] + chosen[: g % 4]
            players = [entrants[i](g, s) for s, i in enumerate(seated)]
            try:
                outcome = Referee(CONTEST).play(players, seed=g)
            finally:
                for p in players:
                    p.close()
            assert outcome.log[-1]["event"] == "end" and check_lines(outcome.log) == []
            counts = outcome.fault_counts()
            for s, i in enumerate(seated):
                place_sum[i] += outcome.result.places[s]
                played[i] += 1
                faults[i] += counts[s]
    finally:
        for f in entrants:
            f.close()
    assert faults[0] == faults[1] == 0 and faults[5] == 0
    assert faults[2] and faults[3] and faults[4]
    average = [place_sum[i] / played[i] for i in range(len(entrants))]
    assert max(average[0], average[1]) < min(average[2], average[3], average[4]), average


# -- fair resources and fresh state: attacks across turns and across games -------------------

#: An honest bot that thinks: a few milliseconds of CPU per move, then plays like greedy.
THINKER = '''
"""Thinks a little every move."""


class Bot:
    def move(self, turn):
        total = 0
        for i in range(100000):
            total += i * i
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                card = max(options, key=lambda c: c.points)
                turn.put(card, "h" if card.rank == "j" else None)
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
'''


def burner_game(freeze: bool) -> tuple[GameOutcome, list[Any]]:
    """The idle burner at seat 1 between two sandboxed thinkers, on the same CPU."""
    limits = dataclasses.replace(LIMITS, freeze=freeze)
    burner = SandboxFactory(read_bot_file(HERE / "escaped" / "idle_burner.py"), limits, escaped_for_tests=True)
    thinker = SandboxFactory(BotSource("thinker", THINKER, "thinker.py"), limits)
    players = [thinker(SEED, 0), burner(SEED, 1), thinker(SEED, 2)]
    try:
        outcome = Referee(CONTEST).play(players, seed=SEED, bots=["thinker", "idle_burner", "thinker"])
    finally:
        for p in players:
            p.close()
        burner.close()
        thinker.close()
    assert outcome.log[-1]["event"] == "end" and check_lines(outcome.log) == []
    return outcome, players


@pytest.mark.slow
def test_an_idle_burner_gets_no_cpu_while_the_others_play() -> None:
    """Once it has computed between two turns, the burner is stopped (SIGSTOP) between its turns:
    its timer handler then runs only on its own turn, on its own CPU time. The honest seats are
    not faulted (and, never computing between turns, never frozen), and the burner got CPU
    outside its turns only in that first gap, measured by its process's CPU clock (unfrozen,
    the next test shows, it burns ten times more)."""
    outcome, players = burner_game(freeze=True)
    assert [f for f in outcome.faults if f.seat != HOSTILE_SEAT] == []
    burner = players[HOSTILE_SEAT]
    assert len(burner.cpu_times) >= 5 and burner.cpu_total > 0
    assert burner.frozen and not players[0].frozen and not players[2].frozen
    assert burner.idle_cpu < 0.04, burner.idle_cpu


@pytest.mark.slow
def test_unfrozen_the_burner_burns_between_turns_but_pays_for_it_and_harms_nobody() -> None:
    """The attack is real (with freezing off the handler burns while others play), and the CPU
    accounting still holds: the honest seats, timed by their own CPU, are not faulted, and
    everything the burner used counts against its own game bank."""
    outcome, players = burner_game(freeze=False)
    assert [f for f in outcome.faults if f.seat != HOSTILE_SEAT] == []
    burner = players[HOSTILE_SEAT]
    assert burner.idle_cpu > 0.05, burner.idle_cpu
    assert burner.cpu_total >= burner.idle_cpu + sum(burner.cpu_times) * 0.9


def test_an_escaped_bot_remembers_nothing_from_one_game_to_the_next(greedy: Any, tmp_path: Path) -> None:
    """Each game runs in a fresh process forked from the bot's template: whatever an escaped
    bot stored in one game (globals, builtins, sys.modules, environ, files, folders, SysV
    shared memory) is gone in the next, even in a duplicate rotation of the same deal."""
    memory = tmp_path / "memory.txt"
    source = (HERE / "escaped" / "remember_games.py").read_text().replace('PATH = ""', f"PATH = {str(memory)!r}")
    factory = SandboxFactory(BotSource("remember_games", source, "remember_games.py"), LIMITS, escaped_for_tests=True)
    firsts, checks = [], []
    try:
        for _ in range(3):  # the same deal every time, as in duplicate play
            players = [greedy(SEED, 0), factory(SEED, HOSTILE_SEAT), greedy(SEED, 2)]
            try:
                outcome = Referee(CONTEST).play(players, seed=SEED)
            finally:
                for p in players:
                    p.close()
            assert outcome.faults == [] and check_lines(outcome.log) == []
            said = says(outcome)
            firsts.append(said[0])
            checks.extend(s for s in said if s.startswith("SELFCHECK"))
    finally:
        factory.close()
    assert firsts == ["FORGOT everything"] * 3, firsts
    # within a game the same channels work, so a memory across games would have been seen
    assert len(checks) == 3 and all(c.startswith("SELFCHECK builtins, sys.modules, random, environ") for c in checks)
    assert not memory.exists() and not os.path.exists("/tmp/arena-memory.txt")
    assert not [n for n in os.listdir("/tmp") if n.startswith("arena-memory-")]
