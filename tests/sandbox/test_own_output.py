"""A bot's own output per game (issue 30, item 2): what a sandboxed seat's bot wrote for its author, kept
bounded (the last 4 KiB) and per game, never another game's: a Python bot's prints, a program's standard
error, a 2012 bot's console lines. It is no part of the record (GameOutcome.outputs, filled by the Seating)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from arena.game.seeds import game_seeds
from arena.sandbox.programs.runtimes import MOOTOOLS
from arena.sandbox.seat import OWN_OUTPUT_BYTES, OwnOutput
from arena.seats.factories import make_factory
from arena.seats.seating import Chair, Seating
from arena.trust.botsource import bot_source

ROOT = Path(__file__).resolve().parents[2]
needs_node = pytest.mark.skipif(
    shutil.which("node") is None or not MOOTOOLS.exists(), reason="node and MooTools (npm ci) are needed"
)

PRINTER = b'''"""Prints a line a move, and once a lot."""
class Bot:
    name = "printer"
    def __init__(self):
        self.moves = 0
    def start_game(self, info):
        self.game = info.game
    def move(self, turn):
        self.moves += 1
        print("py", self.game, "move", self.moves)
        if self.moves == 3:
            print("x" * 6000)
        while not turn.can_finish() and (turn.puttable() or turn.can_draw()):
            turn.put(turn.puttable()[0]) if turn.puttable() else turn.draw()
        turn.finish()
'''


def play(source: bytes, file: str, games: int = 2) -> list[Any]:
    """``games`` games of the sandboxed bot at seat 0 against greedy, one stream (its one process)."""
    from arena.seats.loader import resolve_bot

    factories = {
        "bot": make_factory(bot_source(source, file)),
        "greedy": make_factory(resolve_bot("greedy"), trusted=True),
    }
    seating = Seating(factories.__getitem__)
    try:
        return [
            seating.play(
                [Chair("bot", file), Chair("greedy", "greedy")], game_seeds(7, "t", (g,), (g,)), f"g{g}", streams=True
            )
            for g in range(games)
        ]
    finally:
        seating.close()


def test_the_kept_output_is_its_last_bytes_and_says_what_was_cut() -> None:
    out = OwnOutput(100)
    for n in range(50):
        out.add(f"line {n}\n")
    text = out.text()
    kept = text.split("\n", 1)[1]
    assert text.startswith("[") and "earlier bytes not kept]" in text.splitlines()[0]
    assert len(kept.encode()) <= 100 and kept.endswith("line 49\n") and kept.startswith("line ")  # from a line's start
    dropped = int(text[1:].split()[0])
    assert dropped + len(kept.encode()) == sum(len(f"line {n}\n") for n in range(50))
    assert OwnOutput().text() == ""


def test_a_python_bots_prints_are_its_output_per_game_bounded() -> None:
    outcomes = play(PRINTER, "printer.py")
    for g, outcome in enumerate(outcomes):
        assert not outcome.faults
        mine, other = outcome.outputs
        assert other == ""  # the in-process seat wrote nothing of its own
        assert f"py g{g} move 1\n" in mine and f"g{1 - g} " not in mine  # this game's, not the stream's other game
        assert "printed output past" in mine  # the 6000 characters went past the sandbox's 4096 a game
        assert len(mine.encode()) <= OWN_OUTPUT_BYTES + 100 and mine.startswith(f"py g{g} move 1\n")  # its first prints
        # the record keeps its own (smaller) share of the prints, seen by its seat alone (R10)
        assert any(e["event"] == "say" and e.get("output") for e in outcome.log)


PROGRAM = (
    (ROOT / "examples" / "shed.js")
    .read_text()
    .replace(
        'if (msg.type === "start_game") { POINTS = msg.rules.points;',
        'if (msg.type === "start_game") { GAME = msg.game; POINTS = msg.rules.points;',
    )
    .replace(
        'else if (msg.type === "move") { view = msg.view; next(); }',
        'else if (msg.type === "move") { MOVES += 1; '
        'process.stderr.write(GAME + " move " + MOVES + " " + "e".repeat(300) + "\\n"); view = msg.view; next(); }',
    )
    .replace("let view = null;", "let view = null; let GAME = null; let MOVES = 0;")
)


@needs_node
def test_a_programs_standard_error_is_its_output_its_last_4_kib_per_game() -> None:
    assert "process.stderr.write" in PROGRAM
    outcomes = play(PROGRAM.encode(), "shed.js")
    for g, outcome in enumerate(outcomes):
        assert not outcome.faults
        mine = outcome.outputs[0]
        head, kept = mine.split("\n", 1)
        assert head.startswith("[") and head.endswith("earlier bytes not kept]")
        assert len(kept.encode()) <= OWN_OUTPUT_BYTES
        lines = kept.splitlines()
        assert all(line.startswith(f"g{g} move ") for line in lines), lines[:3]  # never the other game's
        moves = [int(line.split()[2]) for line in lines]
        assert moves == sorted(moves) and moves[-1] > moves[0]  # the last lines, in order
    assert not any("e" * 300 in e.get("text", "") for o in outcomes for e in o.log)  # no part of the record


@needs_node
def test_a_2012_bots_console_lines_are_its_output_not_a_protocol_violation() -> None:
    demo = (ROOT / "examples" / "demo2012.js").read_text()
    chatty = demo.replace(
        "movement: function (first) {", "movement: function (first) { console.log('thinking', first);", 1
    )
    assert chatty != demo
    outcomes = play(chatty.encode(), "chatty2012.js", games=1)
    assert not outcomes[0].faults  # console.log once wrote to the referee's wire: a crash
    assert "thinking true\n" in outcomes[0].outputs[0]


@needs_node
def test_a_killed_programs_standard_error_is_never_read_again() -> None:
    # The attack: the program's stderr pipe is closed when it is killed, and its descriptor's number
    # goes to the next file opened (here, on purpose, another pipe): reading "its" stderr then would
    # take another's bytes into this seat's output.
    import os

    factory = make_factory(bot_source(PROGRAM.encode(), "shed.js"))
    try:
        proc: Any = factory.spawn()  # type: ignore[attr-defined]  # a program's factory
        mark = proc.stderr_seen
        proc.kill()
        read, write = os.pipe()
        try:
            os.dup2(read, proc.fd_e)
            os.set_blocking(proc.fd_e, False)  # as the program's pipe was
            os.write(write, b"another file's bytes\n")
            assert b"another" not in proc.stderr_since(mark)
        finally:
            for fd in (read, write, proc.fd_e):
                os.close(fd)
    finally:
        factory.close()
