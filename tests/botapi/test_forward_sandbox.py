"""The forward model in the sandbox (issue 22): bots/search.py loads under the code policy and
plays exactly the same game sandboxed as in-process, with no fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.game.referee import Referee
from arena.sandbox import Limits, SandboxFactory
from arena.seats.loader import load_trusted, resolve_bot
from arena.trust.botsource import BotSource

SEARCH = Path(__file__).resolve().parents[2] / "bots" / "search.py"


def small_search() -> BotSource:
    """bots/search.py with a tiny budget (the constructor's default changed in the source)."""
    text = SEARCH.read_text(encoding="utf-8")
    assert "def __init__(self, playouts=" in text
    small = text.replace("def __init__(self, playouts=", "def __init__(self, playouts=6 or ", 1)
    return BotSource("search", small, "search-small.py")


@pytest.mark.parametrize("n", [2, 3])  # two seats: the game value of its win table
def test_search_plays_the_same_game_sandboxed_and_in_process(n: int) -> None:
    src = small_search()
    heuristic = load_trusted(resolve_bot("heuristic"))
    trusted = load_trusted(src)
    seed = 31
    inproc = Referee().play([trusted(seed, 0)] + [heuristic(seed, s) for s in range(1, n)], seed=seed)
    factory = SandboxFactory(src, Limits())
    players = [factory(seed, 0)] + [heuristic(seed, s) for s in range(1, n)]
    try:
        boxed = Referee().play(players, seed=seed)
    finally:
        for p in players:
            p.close()
        factory.close()
    assert boxed.faults == [] and inproc.faults == []
    assert [e for e in boxed.log if e["event"] != "game"] == [e for e in inproc.log if e["event"] != "game"]
