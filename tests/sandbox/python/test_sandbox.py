"""Layer 2 and the referee side: sandboxed bots play exactly like trusted ones, every file in
bots/ and examples/ passes the sandbox, limits and faults, output, worker reuse, the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as cli_main
from arena.game.referee import GameInfo, Referee
from arena.game.rules import CONTEST
from arena.sandbox import Limits, SandboxFactory, check_source, hardening_report, sandboxed_factory
from arena.sandbox.jail.harden import LAYERS
from arena.seats.loader import load_trusted, resolve_bot
from arena.trust.botsource import BotSource, read_bot_file
from arena.verify import check_lines

ROOT = Path(__file__).resolve().parents[3]
#: Every shipped bot file but search.py: at its default budget (160 playouts a move) four full
#: games take minutes of CPU; tests/botapi/test_forward_sandbox.py plays it sandboxed and in-process
#: with a small budget and compares the records the same way.
BOT_FILES = sorted(p for p in (ROOT / "bots").glob("*.py") if p.name not in ("__init__.py", "search.py")) + sorted(
    (ROOT / "examples").glob("*.py")
)
LIMITS = Limits(move_seconds=0.5, game_seconds=10.0, load_seconds=2.0)

#: Reads everything the turn shows and says a digest of it every move, then plays like greedy.
WATCHER = '''
"""Says what it sees."""


class Bot:
    def move(self, turn):
        history = turn.history
        last = history[-1]
        turn.say("%s|%s|%s|%s|%d|%s|%s|%d|%d|%s|%s" % (
            turn.first, turn.seat, " ".join(map(str, turn.hand)), turn.top, turn.stock, turn.suit,
            " ".join(map(str, turn.pile)), len(history), turn.points(), sorted(last.items()),
            [tuple(p) for p in turn.players]))
        turn.say("rules %d %s %s" % (turn.rules.limit, turn.rules.name, " ".join(map(str, turn.put_this_move))))
        if not turn.puttable() and turn.can_draw():
            card = turn.draw()
            turn.say("drew %s; history %d; pile %d" % (card, len(turn.history), len(turn.pile)))
        while True:
            options = turn.puttable()
            if options:
                card = max(options, key=lambda c: (c.points, c.rank != "6"))
                turn.put(card, "h" if card.rank == "j" else None)
                last = turn.history[-1]["event"]
                turn.say("after put: %d events, pile %d, %s" % (len(turn.history), len(turn.pile), last))
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()

    def end_round(self, result):
        self.last = result.scores
'''


def without_output(log: list[dict]) -> list[dict]:
    return [e for e in log if not (e["event"] == "say" and e.get("output"))]


def play(factories: list[Any], seed: int, rules: Any = CONTEST) -> Any:
    players = [f(seed, s) for s, f in enumerate(factories)]
    try:
        return Referee(rules).play(players, seed=seed)
    finally:
        for p in players:
            p.close()


@pytest.mark.parametrize("path", BOT_FILES, ids=[p.stem for p in BOT_FILES])
def test_every_shipped_bot_passes_the_sandbox_and_plays_as_when_trusted(path: Path) -> None:
    src = read_bot_file(path)
    check_source(src)
    sandboxed = SandboxFactory(src, LIMITS)
    trusted = load_trusted(src)
    greedy = load_trusted(resolve_bot("greedy"))
    try:
        for seed in (1, 2):
            a = play([sandboxed, greedy, sandboxed], seed)
            b = play([trusted, greedy, trusted], seed)
            assert a.faults == [] and check_lines(a.log) == []
            assert without_output(a.log) == without_output(b.log)
    finally:
        sandboxed.close()


def test_the_turn_in_a_worker_shows_exactly_what_it_shows_in_process() -> None:
    src = BotSource("watcher", WATCHER, "watcher.py")
    sandboxed = SandboxFactory(src, LIMITS)
    trusted = load_trusted(src)
    greedy = load_trusted(resolve_bot("greedy"))
    rules = CONTEST.replace(limit=60, name="short")
    try:
        for seed in (3, 4):
            a = play([sandboxed, greedy, sandboxed], seed, rules)
            b = play([trusted, greedy, trusted], seed, rules)
            assert a.faults == []
            assert a.log == b.log
            assert any(e["event"] == "say" and e["text"].startswith("rules 60 short") for e in a.log)
    finally:
        sandboxed.close()


def test_output_is_recorded_but_kept_out_of_other_bots_history() -> None:
    printer = BotSource(
        "printer",
        """
class Bot:
    def start_game(self, game):
        print("hello from seat", game.seat)

    def move(self, turn):
        print("my hand:", *turn.hand)
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            if turn.puttable():
                turn.put(turn.puttable()[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
""",
        "printer.py",
    )
    watcher = SandboxFactory(BotSource("watcher", WATCHER, "watcher.py"), LIMITS)
    factory = SandboxFactory(printer, LIMITS)
    try:
        outcome = play([factory, watcher], 5)
    finally:
        factory.close()
        watcher.close()
    assert outcome.faults == [] and check_lines(outcome.log) == []
    output = [e for e in outcome.log if e["event"] == "say" and e.get("output")]
    assert output[0] == {"event": "say", "seat": 0, "text": "hello from seat 0\n", "output": True}
    assert output[1]["text"].startswith("my hand: ")
    assert sum(len(e["text"]) for e in output) <= LIMITS.max_output_bytes + 40
    # the watcher (seat 1) counts history events: never the printer's output lines
    public = [e for e in outcome.log if not (e["event"] == "say" and e.get("output"))]
    for i, e in enumerate(public):
        if e["event"] == "say" and e["seat"] == 1 and "|" in e["text"]:
            seen = int(e["text"].split("|")[7])
            assert seen == i  # events before this say, output lines excluded


def test_time_bank_runs_out_then_the_bot_is_retired() -> None:
    slow = BotSource(
        "slow",
        """
class Bot:
    def move(self, turn):
        n = 0
        while n < 10 ** 9:
            n += 1
            if n % 1000 == 0 and self.late(n):
                break
        turn.draw() if turn.can_draw() else None
        while not turn.can_finish() and turn.puttable():
            turn.put(turn.puttable()[0])
        turn.finish()

    def late(self, n):
        return n > 300000
""",
        "slow.py",
    )
    limits = Limits(move_seconds=5.0, game_seconds=0.4, load_seconds=2.0)
    factory = SandboxFactory(slow, limits)
    greedy = load_trusted(resolve_bot("greedy"))
    try:
        outcome = play([factory, greedy], 6)
    finally:
        factory.close()
    kinds = [f.kind for f in outcome.faults]
    assert kinds[-2:] == ["timeout", "retired"]
    assert set(kinds) <= {"timeout", "retired", "illegal-finish"}
    assert outcome.result.places[0] == 2 and check_lines(outcome.log) == []


def test_every_game_gets_a_fresh_process_forked_from_one_template() -> None:
    src = BotSource(
        "counter",
        """
GAMES = []


class Bot:
    def __init__(self):
        GAMES.append(1)

    def move(self, turn):
        turn.say("games in this module: %d" % len(GAMES))
        if turn.seat == 0 and turn.stock < 5 and len(turn.hand) > 6:
            while True:
                pass
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while not turn.can_finish() and turn.puttable():
            turn.put(turn.puttable()[0])
        if turn.can_finish():
            turn.finish()
        else:
            turn.draw()
            turn.finish()
""",
        "counter.py",
    )
    factory = SandboxFactory(src, Limits(move_seconds=0.3, game_seconds=5.0))
    greedy = load_trusted(resolve_bot("greedy"))
    pids: list = []
    templates: list = []
    try:
        for seed in range(4):
            player = factory(seed, 1)
            players = [greedy(seed, 0), player]
            outcome = Referee().play(players, seed=seed)
            pids.append(player.worker.pid if player.worker else None)
            templates.append(factory.template.proc.pid if factory.template else None)
            for p in players:
                p.close()
            said = {e["text"] for e in outcome.log if e["event"] == "say" and not e.get("capped")}
            assert said == {"games in this module: 1"}  # a fresh module every game
    finally:
        factory.close()
    assert None not in pids and len(set(pids)) == 4  # one process per game
    assert None not in templates and len(set(templates)) == 1  # all forked from the same template


def test_a_killed_worker_is_replaced_in_the_next_game() -> None:
    src = BotSource(
        "hang",
        """
class Bot:
    def move(self, turn):
        while True:
            pass
""",
        "hang.py",
    )
    factory = SandboxFactory(src, Limits(move_seconds=0.2, game_seconds=5.0))
    greedy = load_trusted(resolve_bot("greedy"))
    try:
        for seed in range(2):
            outcome = play([factory, greedy], seed)
            assert [f.kind for f in outcome.faults] == ["timeout", "retired"]
    finally:
        factory.close()


def test_hardening_report_names_every_layer() -> None:
    report = hardening_report()
    assert set(report.layers) == set(LAYERS)
    assert all(state == "active" or state.startswith(("unavailable", "failed")) for state in report.layers.values())
    factory = SandboxFactory(resolve_bot("greedy"), LIMITS)
    assert set(factory.report["layers"]) == set(LAYERS)
    assert set(factory.report["supervision"]) == {"cpu_time", "freeze", "fresh_process"}
    try:
        player = factory(1, 0)
        player.start_game(GameInfo(0, ("greedy", "greedy"), CONTEST, "g"))
        assert player.worker is not None
        assert set(player.worker.report["layers"]) == set(LAYERS)
        assert player.worker.report["layers"] == factory.report["layers"]  # every game process, the same layers
        assert player.worker.report["layers"]["rlimits"] == "active"
        player.close()
    finally:
        factory.close()


def test_sandboxed_factory_is_what_players_use() -> None:
    from arena.seats.factories import make_factory

    factory = make_factory(read_bot_file(ROOT / "bots" / "greedy.py"))
    assert type(factory).__name__ == "SandboxFactory"
    factory.close()
    factory = sandboxed_factory(resolve_bot("random"))
    player = factory(1, 0)
    assert player.name == "random"
    player.close()
    factory.close()


def test_arena_play_runs_a_bot_file_sandboxed(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["play", str(ROOT / "bots" / "greedy.py"), "random", "--games", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "greedy" in out and "random" in out


def test_arena_play_refuses_a_hostile_file_in_one_line() -> None:
    bad = ROOT / "tests" / "sandbox" / "python" / "hostile" / "import_os.py"
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "play", str(bad), "greedy"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "import of 'os' not allowed" in proc.stderr
    assert "Traceback" not in proc.stderr
