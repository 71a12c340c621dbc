"""Programs that search ahead over the wire (issue 22): examples/search.js, and the CPU charge.

The referee's work for a program's ``simulate`` is the program's CPU: a program whose
requests alone take more than its move's time is stopped with the timeout fault a
program gets for its own CPU. Games with a searching program verify and replay the
same (its seeds come from the referee's seed).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.game.referee import Referee
from arena.game.rules import CONTEST
from arena.sandbox import Limits
from arena.sandbox.programs.runtimes import program_factory
from arena.seats.loader import load_trusted, resolve_bot
from arena.trust.botsource import read_bot_file
from arena.verify import check_lines

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

ROOT = Path(__file__).parents[3]
SEARCH = ROOT / "examples" / "search.js"

#: A program that asks one simulate of WORLDS worlds (4 plans, whole games) at each move, then plays
#: its first puttable card or draws, and finishes: all but its requests costs it next to nothing.
ASKER = """
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\\n");
let view = null;
let seed = 0;
const put = () => send({ action: "put", card: view.puttable[0], suit: null });
function go() {
  if (view.puttable.length > 0 && (view.put_this_move.length === 0 || !view.can_finish)) put();
  else if (!view.can_finish && view.can_draw) send({ action: "draw" });
  else if (view.can_finish) send({ action: "finish" });
  else send({ action: "draw" });
}
rl.on("line", (l) => {
  const m = JSON.parse(l);
  if (m.type === "start_game") send({ type: "ready" });
  else if (m.type === "move") {
    view = m.view;
    send({ action: "simulate", seed: seed++, worlds: WORLDS, plans: [[], [], [], []], until: "game" });
  }
  else if (m.type === "simulated") go();
  else if (m.type === "ok") { view = m.view; go(); }
  else if (m.type === "error") send({ action: "finish" });
});
"""


def standings(out: str) -> dict[str, dict[str, float]]:
    return {row["bot"]: row for row in json.loads(out)["standings"]}


def test_the_search_example_beats_random_with_no_fault_and_its_records_verify_and_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["play", str(SEARCH), "random", "-n", "3", "--seed", "5", "--rule", "max_rounds=1", "--json", "-q"]
    records = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    assert main([*args, "--replay", str(records[0])]) == 0
    rows = standings(capsys.readouterr().out)
    search, rand = rows["search (file)"], rows["random"]
    assert search["faults"] == 0 and search["wins"] >= 2
    assert search["avg_score"] + 15 <= rand["avg_score"]
    assert main(["verify", str(records[0])]) == 0
    assert main([*args[:3], "-n", "1", *args[5:], "--replay", str(records[1])]) == 0
    first = records[0].read_text().split('\n{"event":"game"')[0]
    assert first.startswith('{"event":"game"') and records[1].read_text().rstrip("\n") == first.rstrip("\n")


def test_the_referees_search_work_is_charged_to_the_program(tmp_path: Path) -> None:
    """One game at the seat level: each move's recorded CPU includes its requests' work."""
    src = read_bot_file(SEARCH)
    rand = load_trusted(resolve_bot("random"))
    factory = program_factory(src, Limits(move_seconds=2.0, game_seconds=30.0, load_seconds=5.0))
    players = [factory(3, 0), rand(3, 1)]
    try:
        outcome = Referee(CONTEST.replace(max_rounds=1)).play(players, seed=3, bots=[src.label, "random"])
    finally:
        for p in players:
            p.close()
        factory.close()
    seat = players[0]
    assert outcome.faults == [] and check_lines(outcome.log) == []
    assert seat.search.game_seconds > 0.005
    assert sum(seat.cpu_times) >= seat.search.game_seconds
    assert seat.bank <= seat.limits.game_seconds - seat.search.game_seconds + 1e-9


@pytest.mark.parametrize(("worlds", "fault"), [(1, False), (512, True)])
def test_a_program_whose_requests_alone_pass_its_move_time_is_stopped(
    worlds: int, fault: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "asker.js"
    bot.write_text(ASKER.replace("WORLDS", str(worlds)))
    args = [
        "play",
        str(bot),
        "greedy",
        "-n",
        "1",
        "--seed",
        "9",
        "--move-time",
        "0.05",
        "--rule",
        "max_rounds=1",
        "--json",
        "-q",
    ]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert standings(captured.out)["asker"]["faults"] == (1 if fault else 0)
    if fault:
        assert "timeout: over the per-move limit (0.05 s of CPU)" in captured.err, captured.err


def test_a_loaded_machine_never_faults_a_program_for_the_referees_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack on the CPU charge's fairness: the referee's answer to a request takes wall time
    the program does not control (here its first answer waits past the program's wall-clock
    backstop, as on a machine loaded many times over). The program waits meanwhile, so its
    backstop waits too: no fault, and the turn's wall time is the program's own."""
    from arena.sandbox.programs.simulate import Searcher

    limits = Limits(move_seconds=0.05, game_seconds=30.0, load_seconds=5.0)
    slow = limits.backstop(limits.move_seconds) + 0.5
    real, calls = Searcher.answer, []

    def loaded(self: Searcher, ctx: Any, request: dict[str, Any], left: float) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            time.sleep(slow)  # wall time, no CPU: what a loaded machine does to the referee
        return real(self, ctx, request, left)

    monkeypatch.setattr(Searcher, "answer", loaded)
    bot = tmp_path / "asker.js"
    bot.write_text(ASKER.replace("WORLDS", "1"))
    factory = program_factory(read_bot_file(bot), limits)
    greedy = load_trusted(resolve_bot("greedy"))
    players = [factory(9, 0), greedy(9, 1)]
    try:
        outcome = Referee(CONTEST.replace(max_rounds=1)).play(players, seed=9, bots=["asker", "greedy"])
    finally:
        for p in players:
            p.close()
        factory.close()
    assert calls and outcome.faults == [], [f.detail for f in outcome.faults]
    assert check_lines(outcome.log) == []
