"""The 2012 contest's API as its announcement lists it (issue 29): the demo AI, byte for byte, plays
unfaulted at every table size and is accepted by every command; a JS bot's fault names its own file
and line; a JS syntax error is refused before any game, in one line.

The shim's semantics are driven line by line here too (``Shim``: node running the staged shim on
hand-made views, no referee), so that each case of the listing is met on purpose, however rare in
play: an opening six, a draw loop of any length, no card left to draw anywhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.game.referee import Referee
from arena.game.rules import CONTEST
from arena.sandbox.programs.runtimes import MOOTOOLS, bot_file_name, program_factory
from arena.seats.loader import load_trusted, read_bot_file, resolve_bot
from arena.verify import check_lines

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not MOOTOOLS.exists(), reason="node and MooTools (npm ci) are needed"
)

ROOT = Path(__file__).parents[3]
DEMO = ROOT / "examples" / "demo2012.js"
JS = ROOT / "arena" / "sandbox" / "programs" / "js"
#: The sha256 of the announcement's listing (the code block of the 2012 contest's announcement,
#: comments included). examples/demo2012.js is that listing and must never change: a bot written
#: then plays unchanged, and this one proves it.
LISTING_SHA256 = "e0ce22e94b152959f6b66e479394c07bebbca91e05bfe867e08bc84bae6fce56"


def test_the_demo_is_the_announcements_listing_byte_for_byte() -> None:
    data = DEMO.read_bytes()
    assert hashlib.sha256(data).hexdigest() == LISTING_SHA256
    doc = (ROOT / "docs" / "bot-api-2012.md").read_text(encoding="utf-8")
    assert doc.split("```js\n", 1)[1].split("```\n", 1)[0].encode() == data  # the doc shows the same bytes


# -- the demo, played --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_demo_plays_100_games_at_2_to_6_seats_without_a_fault_and_its_records_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    opponents = ["random", "greedy", "heuristic", "random", "greedy"]
    records = []
    for n in range(2, 7):
        record = tmp_path / f"{n}p.jsonl"
        argv = ["play", str(DEMO), *opponents[: n - 1], "--games", "20", "--seed", str(n), "--replay", str(record)]
        assert main([*argv, "--json", "-q"]) == 0
        standings = json.loads(capsys.readouterr().out)["standings"]
        demo = [row for row in standings if row["bot"] == "demo2012"]
        assert demo[0]["games"] == 20 and demo[0]["faults"] == 0, demo
        assert sum(row["faults"] for row in standings) == 0, standings
        records.append(str(record))
    assert main(["verify", *records]) == 0
    assert "100 games in 5 files: 100 OK, 0 FAIL" in capsys.readouterr().out


def test_the_demo_passes_arena_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(DEMO)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == f"{DEMO}: clean" and "FAULT" not in out and "warning" not in out, out


def play_one(path: Path, seed: int = 5) -> Any:
    """``path`` at seat 1 between two trusted greedy bots, sandboxed."""
    src = read_bot_file(path)
    greedy = load_trusted(resolve_bot("greedy"))
    factory = program_factory(src)
    players = [greedy(seed, 0), factory(seed, 1), greedy(seed, 2)]
    try:
        outcome = Referee(CONTEST).play(players, seed=seed, bots=["greedy", src.label, "greedy"])
    finally:
        for p in players:
            p.close()
        factory.close()
    assert check_lines(outcome.log) == []
    return outcome


# -- a fault names the author's file and line ------------------------------------------------------------

THROWS_2012 = """\
// Throws on its second move, at a line of its own.
window.addEvent('domready', function () {
Bridge.AI = new Class({
\tExtends: Bridge.AIUtils,
\tmoves: 0,
\tmovement: function (first) {
\t\tthis.moves++;
\t\tif (this.moves == 2) {
\t\t\tvar nothing = null;
\t\t\treturn nothing.rank;
\t\t}
\t\tthis.canFinishMove() ? this.finishMove() : this.putCard(this.player.cards[0], this.move.bind(this));
\t}
});
});
"""


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_a_2012_bots_fault_names_its_own_file_and_line(tmp_path: Path) -> None:
    """The thrown TypeError cites mybot.js's line, and a putCard the shim refuses cites the bot's
    line that called it: never shim.js, mootools.js or node's internals."""
    path = tmp_path / "mybot.js"
    path.write_text(THROWS_2012, encoding="utf-8")
    details = {f.detail for f in play_one(path).faults if f.seat == 1 and f.kind.value == "exception"}
    line = line_of(THROWS_2012, "nothing.rank")
    thrown = f"TypeError: Cannot read properties of null (reading 'rank') (mybot.js:{line})"
    assert thrown in details, details
    put = f"(mybot.js:{line_of(THROWS_2012, 'this.putCard')})"
    assert any(d.startswith("Error: putCard: ") and d.endswith(put) for d in details), details
    assert not any("shim" in d or "mootools" in d or "node:" in d for d in details), details


PROGRAM_THROWS = """\
// A protocol-v1 program whose second move calls a function it never defined.
const readline = require("readline");
let moves = 0;
const send = (o) => process.stdout.write(JSON.stringify(o) + "\\n");
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "start_game") send({ type: "ready" });
  if (msg.type === "move" && ++moves === 2) noSuchFunction();
  if (msg.type === "move") send({ action: msg.view.can_finish ? "finish" : msg.view.can_draw ? "draw" : "finish" });
  if (msg.type === "ok") send({ action: "finish" });
});
"""


def test_a_programs_uncaught_error_names_its_own_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "prog.js"
    path.write_text(PROGRAM_THROWS, encoding="utf-8")
    crashes = [f.detail for f in play_one(path).faults if f.seat == 1 and f.kind.value == "crash"]
    line = line_of(PROGRAM_THROWS, "noSuchFunction")
    assert crashes == [f"program exited with status 1: ReferenceError: noSuchFunction is not defined (prog.js:{line})"]


def test_the_name_a_fault_cites_is_a_plain_file_name() -> None:
    from dataclasses import replace

    src = read_bot_file(DEMO)
    assert bot_file_name(src) == "demo2012.js"
    assert bot_file_name(replace(src, path=None)) == "demo2012.js"  # a stored bot: NAME.js
    for odd in ("/x/mootools.js", "/x/-rf.js", "/x/a b.js", "/x/bot.py", "/x/" + "a" * 80 + ".js"):
        assert bot_file_name(replace(src, path=odd)) == "bot.js", odd


# -- a syntax error: one line, before any game ---------------------------------------------------------

SYNTAX = {
    # name: (source, the line and column of the error)
    "api2012.js": (
        "window.addEvent('domready', function () {\nBridge.AI = new Class({\n"
        "  movement: function () {\n    var x = ;\n  }\n});\n});\n",
        4,
        13,
    ),
    "program.js": ('const readline = require("readline");\n\nfunction f() {\n  return 1 +;\n}\n', 4, 13),
    # an ES module (node 20 detects one): `node --check` would pass it, its syntax error unseen
    "module.js": ('import readline from "readline";\nconsole.log(1\n', 2, 13),
}


@pytest.mark.parametrize("name", sorted(SYNTAX))
def test_a_js_syntax_error_is_one_line_with_its_line_exit_2_before_any_game(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, line, column = SYNTAX[name]
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    assert main(["play", str(path), "greedy", "--games", "3", "--replay", str(tmp_path / "r.jsonl")]) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"arena: error: {path}:{line}:{column}: syntax error: "), err
    assert out == "" and not (tmp_path / "r.jsonl").exists()  # no game was played
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"  PROBLEM {path}:{line}:{column}: syntax error: " in out and "players:" not in out, out
    assert main(["submit", str(path), "--to", str(tmp_path / "subs")]) == 1  # as a Python syntax error: refused
    err = capsys.readouterr().err
    assert err.startswith(f"arena: error: submission refused: the check failed: {path}:{line}:{column}: syntax error")
    assert err.count("\n") == 1 and not (tmp_path / "subs").exists()


def test_a_file_nested_too_deep_to_compile_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An attack on the check: V8 runs out of stack compiling it (not a SyntaxError): refused all
    the same, in one line naming the error, before any game (it was "Node.js v20...")."""
    path = tmp_path / "deep.js"
    path.write_text("var x = " + "[" * 100_000 + "]" * 100_000 + ";\n", encoding="utf-8")
    assert main(["play", str(path), "greedy", "--games", "1"]) == 2
    out, err = capsys.readouterr()
    assert err == f"arena: error: {path}: does not compile: RangeError: Maximum call stack size exceeded\n"
    assert out == ""


def test_a_tournament_warns_of_a_js_syntax_error_as_of_a_python_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, line, column = SYNTAX["api2012.js"]
    path = tmp_path / "broken.js"
    path.write_text(source, encoding="utf-8")
    assert main(["tournament", str(path), "greedy", "--games", "1", "--db", str(tmp_path / "t.db"), "-q"]) == 0
    err = capsys.readouterr().err
    assert f"{path}:{line}:{column}: syntax error: " in err and "will be recorded as crashed" in err, err


# -- the shim, driven line by line ----------------------------------------------------------------------


class Shim:
    """node running the 2012 shim on ``source`` in a folder staged as the referee stages it (not
    sandboxed: the bots here are the tests' own); the test plays the referee's side of protocol v1."""

    def __init__(self, folder: Path, source: str, seed: int = 7) -> None:
        folder.mkdir()
        (folder / "bot.js").write_text(source, encoding="utf-8")
        errors = (JS / "errors.js").read_text(encoding="utf-8").replace('/* BOT_FILE */ "bot.js"', '"mybot.js"')
        (folder / "errors.js").write_text(errors, encoding="utf-8")
        shutil.copy(JS / "contest2012.js", folder / "shim.js")
        shutil.copy(MOOTOOLS, folder / "mootools.js")
        self.proc = subprocess.Popen(
            ["node", "shim.js"], cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        players = ["me", "them"]
        self.send({"type": "start_game", "seat": 0, "players": players, "rules": CONTEST.to_dict(), "seed": seed})
        assert self.read() == {"type": "ready"}

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the shim ended"
        found: dict[str, Any] = json.loads(line)
        return found

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def view(hand: list[str], top: str, puttable: list[str], **more: Any) -> dict[str, Any]:
    """A view of seat 0's move at a two-seat table (docs/protocol.md)."""
    held = more.pop("held", 5)
    return {
        "seat": 0,
        "first": False,
        "hand": hand,
        "top": top,
        "suit": top[-1],
        "pile": [top],
        "put_this_move": [],
        "stock": 20,
        "players": [
            {"seat": 0, "name": "me", "cards": len(hand), "score": 0, "skips": 0},
            {"seat": 1, "name": "them", "cards": held, "score": 0, "skips": 0},
        ],
        "history": [],
        "puttable": puttable,
        "can_draw": not puttable,
        "can_finish": False,
    } | more


@pytest.fixture
def demo(tmp_path: Path) -> Any:
    shim = Shim(tmp_path / "demo", DEMO.read_text(encoding="utf-8"))
    yield shim
    shim.close()


def test_has_puttable_is_one_puttable_card_and_the_demo_puts_it(demo: Shim) -> None:
    demo.send({"type": "move", "view": view(["9h", "kd", "9s", "6c"], "9c", ["9h", "9s", "6c"])})
    put = demo.read()
    assert put["action"] == "put" and put["card"] in ("9h", "9s", "6c"), put
    demo.send({"type": "ok", "view": view(["kd"], put["card"], [], can_draw=False, can_finish=True)})
    assert demo.read() == {"action": "finish"}


def test_an_opening_six_makes_the_demo_cover_it_through_move_not_loop(demo: Shim) -> None:
    """movement(true) cannot finish on an opening six: this.move() is movement(false), which puts a cover."""
    opening = view(["6d", "kh", "jc"], "6h", ["6d", "kh", "jc"], first=True, put_this_move=["6h"], can_draw=False)
    demo.send({"type": "move", "view": opening})
    put = demo.read()
    assert put["action"] == "put" and put["card"] in ("6d", "kh", "jc"), put
    assert put["suit"] is None or put["card"] == "jc" and put["suit"] in "schd"


def test_a_draw_loop_of_any_length_keeps_the_stack_flat(demo: Shim) -> None:
    """20,000 draws looking for a cover of a six, each answered: the callbacks chain (getCard ->
    onFinish -> finishSmart -> move -> movement -> getCard) on a fresh stack each time."""
    hand = ["kc"]
    six = view(hand, "6h", [], put_this_move=["6h"])
    demo.send({"type": "move", "view": six})
    for i in range(20000):
        assert demo.read() == {"action": "draw"}, i
        demo.send({"type": "ok", "card": "kc", "view": six})
    assert demo.read() == {"action": "draw"}
    covered = view([*hand, "9h"], "6h", ["9h"], put_this_move=["6h"], can_draw=False)
    demo.send({"type": "ok", "card": "9h", "view": covered})
    assert demo.read() == {"action": "put", "card": "9h", "suit": None}
    demo.send({"type": "ok", "view": view(hand, "9h", [], can_draw=False, can_finish=True)})
    assert demo.read() == {"action": "finish"}


def test_get_card_with_no_card_left_anywhere_lets_the_demo_finish(demo: Shim) -> None:
    """R7.2: stock empty and every other card held (35 in hands): the demo's getCard does not
    throw; onFinish gets null and the move may finish (R4.5)."""
    hand = ["kc", "qd", "ah", "10s", "7d"]
    stuck = view(hand, "9h", [], stock=0, held=30, can_draw=False, can_finish=True)
    demo.send({"type": "move", "view": stuck})
    assert demo.read() == {"action": "finish"}


def test_the_same_seed_makes_the_same_choices(tmp_path: Path) -> None:
    def choices(folder: str, seed: int) -> list[str]:
        shim = Shim(tmp_path / folder, DEMO.read_text(encoding="utf-8"), seed=seed)
        picked = []
        for _ in range(12):
            shim.send({"type": "move", "view": view(["9h", "9s", "9d", "9c", "jh"], "9c", ["9h", "9s", "9d", "jh"])})
            put = shim.read()
            picked.append(f"{put['card']}{put['suit'] or ''}")
            shim.send({"type": "ok", "view": view(["kd"], put["card"], [], can_draw=False, can_finish=True)})
            assert shim.read() == {"action": "finish"}
        shim.close()
        return picked

    assert choices("a", 11) == choices("b", 11)


TIMERS = """\
// Waits before each step, with MooTools' delay and a plain setTimeout; says hello.
window.addEvent('domready', function () {
Bridge.AI = new Class({
\tExtends: Bridge.AIUtils,
\tmovement: function (first) {
\t\tif (this.msg('hello') !== this) throw new Error('msg does not return this');
\t\tvar card = this.player.hasPuttable();
\t\tif (!card) return setTimeout(function () { this.getCard(this.finishMove.bind(this)); }.bind(this), 5000);
\t\tthis.putCard.delay(1000, this, [card, function () { this.finishMove.delay(10, this); }.bind(this)]);
\t}
});
});
"""


def test_timers_run_on_a_virtual_clock_within_the_move(tmp_path: Path) -> None:
    shim = Shim(tmp_path / "timers", TIMERS)
    try:
        shim.send({"type": "move", "view": view(["9h", "kd"], "9c", ["9h"])})
        assert shim.read() == {"action": "say", "text": "hello"}
        assert shim.read() == {"action": "put", "card": "9h", "suit": None}  # at once: no real second waited
        shim.send({"type": "ok", "view": view(["kd"], "9h", [], can_draw=False, can_finish=True)})
        assert shim.read() == {"action": "finish"}
        shim.send({"type": "move", "view": view(["kd"], "9h", [])})
        assert shim.read() == {"action": "say", "text": "hello"}
        assert shim.read() == {"action": "draw"}
        shim.send({"type": "ok", "card": "7s", "view": view(["kd", "7s"], "9h", [], can_draw=False, can_finish=True)})
        assert shim.read() == {"action": "finish"}
    finally:
        shim.close()


def test_a_second_put_before_the_first_landed_is_refused_at_its_own_line(tmp_path: Path) -> None:
    source = (
        "window.addEvent('domready', function () {\nBridge.AI = new Class({\n\tExtends: Bridge.AIUtils,\n"
        "\tmovement: function () {\n\t\tthis.putCard('9h');\n\t\tthis.putCard('9s');\n\t}\n});\n});\n"
    )
    shim = Shim(tmp_path / "eager", source)
    try:
        shim.send({"type": "move", "view": view(["9h", "9s"], "9c", ["9h", "9s"])})
        assert shim.read() == {"action": "put", "card": "9h", "suit": None}
        error = shim.read()
        assert error["action"] == "error" and "has not finished" in error["message"], error
        second = line_of(source, "'9s'")
        assert error["message"].endswith(f"(mybot.js:{second})"), error
    finally:
        shim.close()


def test_the_staged_files_are_the_arenas_own(tmp_path: Path) -> None:
    """A bot file named like a staged one (mootools.js) is never cited as itself."""
    os.makedirs(tmp_path / "x")
    path = tmp_path / "x" / "mootools.js"
    path.write_text(THROWS_2012, encoding="utf-8")
    details = {f.detail for f in play_one(path).faults if f.seat == 1}
    assert any(d.endswith(f"(bot.js:{line_of(THROWS_2012, 'nothing.rank')})") for d in details), details
