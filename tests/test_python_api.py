"""The Python API (issue 18): docs/python-api.md's examples run as written, ``arena play``
uses the same match loop, and a position set up in code is what the seat sees."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
from support.cli import run

import arena
from arena.errors import UsageError

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_python_api_page_runs_as_written() -> None:
    failed, tried = doctest.testfile(
        str(DOCS / "python-api.md"), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert tried >= 10 and failed == 0


def test_the_api_module_doctest() -> None:
    import arena.api

    failed, tried = doctest.testmod(arena.api)
    assert tried >= 1 and failed == 0


def test_arena_play_the_command_and_the_api_agree(capsys: pytest.CaptureFixture[str]) -> None:
    result = arena.play(["greedy", "random", "heuristic"], games=6, seed=9, keep_records=False)
    code, out, _ = run(capsys, "play", "greedy", "random", "heuristic", "-n", "6", "--seed", "9", "--json")
    assert code == 0 and json.loads(out) == result.to_doc() and result.records == ()


def test_the_api_refuses_what_it_cannot_play(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="R2"):
        arena.play(["greedy"], games=1, seed=1)
    with pytest.raises(ValueError, match="seats bots only"):
        arena.play(["greedy", "human"], games=1, seed=1)
    with pytest.raises(arena.BotLoadError, match="no such file"):
        arena.play(["greedy", str(tmp_path / "missing.py")], games=1, seed=1)
    with pytest.raises(UsageError, match="already exists"):
        (tmp_path / "taken.jsonl").write_text("mine\n")
        arena.play(["greedy", "random"], games=1, seed=1, record_file=str(tmp_path / "taken.jsonl"))
    assert (tmp_path / "taken.jsonl").read_text() == "mine\n"
    with pytest.raises(ValueError, match="two places: 9c"):
        arena.position(hands=["9c", "7s"], pile="9c")
    with pytest.raises(ValueError, match="mover 2"):
        arena.position(hands=["9h", "7s"], pile="9c", mover=2)


def test_the_turn_of_a_position_is_the_seats_view() -> None:
    seen = {}

    class Look:
        def move(self, turn: object) -> None:
            t = turn  # what an in-process seat gets from the referee
            seen.update(
                hand=[str(c) for c in t.hand],  # type: ignore[attr-defined]
                top=str(t.top),  # type: ignore[attr-defined]
                stock=t.stock,  # type: ignore[attr-defined]
                counts=[p.cards for p in t.players],  # type: ignore[attr-defined]
                seat=t.seat,  # type: ignore[attr-defined]
                deal=[dict(e) for e in t.history if e["event"] == "deal"],  # type: ignore[attr-defined]
            )
            t.draw()  # type: ignore[attr-defined]
            t.finish()  # type: ignore[attr-defined]

    pos = arena.position(hands=["7s 8s", "qc", "kd ad 6h"], pile="9c", stock="10c jh", mover=1)
    answer = arena.ask(Look(), pos)
    (deal,) = seen.pop("deal")
    assert seen == {"hand": ["qc"], "top": "9c", "stock": 2, "counts": [2, 1, 3], "seat": 1}
    assert deal["hands"] == (2, 1, 3)  # R10: the seat sees how many cards each holds, not which
    assert answer.actions == ({"event": "draw", "card": "10c"}, {"event": "finish"})
