"""Layer 1: the read-only mappings bots get hold no ``_`` key at all (issue 17, class B).

The subscript guard refused ``m['_x']`` on a ``MappingProxyType``, but every other road
read the keys anyway (``get``, ``keys``, ``items``, ``copy``, ``dict(m)``, ``{**m}``,
``m | {}``, ``repr``, ``sorted``, ``ChainMap``...). The class is closed at its root: the
public events are built without ``_`` keys at every depth (:func:`arena.botapi.turn.public_data`,
what sandboxed seats are sent) and frozen without them (:func:`arena.botapi.turn.freeze`, what
every bot reads); the subscript guard stays as defence in depth. Here the engine is made
to log ``_`` keys (top level and nested) and the hostile bot
``tests/sandbox/python/hostile/mapping_underscore_keys.py`` reads every event by every road, in the
referee's process under the code policy and in a sandboxed worker.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.botapi.turn import freeze
from arena.game import engine
from arena.game.referee import GameOutcome, Referee
from arena.game.rules import CONTEST
from arena.game.visibility import public_data
from arena.sandbox import Limits, SandboxFactory, check_source
from arena.sandbox.policy.compiler import compile_bot, instantiate
from arena.seats.loader import InProcessPlayer, load_trusted, resolve_bot
from arena.trust.botsource import read_bot_file

BOT = Path(__file__).parents[1] / "python" / "hostile" / "mapping_underscore_keys.py"
MARK = "SECRET-VALUE"
LIMITS = Limits(move_seconds=1.0, game_seconds=20.0, load_seconds=5.0, startup_seconds=30.0, wall_factor=60.0)


def poisoned(event: dict[str, Any]) -> dict[str, Any]:
    event["_secret"] = MARK
    event["nest"] = {"_secret": MARK, "_x": [MARK], "ok": [{"_secret": MARK, "fine": 1}]}
    return event


@pytest.fixture
def poison(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Every event the engine logs carries ``_`` keys, at the top and nested."""
    logged: list[dict[str, Any]] = []
    init = engine.Game.__init__

    def patched(self: Any, *args: Any, **kw: Any) -> None:
        init(self, *args, **kw)
        emit = self._emit

        def emit_poisoned(event: Any) -> None:
            logged.append(event)
            emit(poisoned(event))

        self._emit = emit_poisoned

    monkeypatch.setattr(engine.Game, "__init__", patched)
    yield logged


def load_bot(seed: int = 1) -> Any:
    src = read_bot_file(BOT)
    check_source(src)
    return instantiate(compile_bot(src), src, seed)


def said(outcome: GameOutcome, prefix: str) -> list[str]:
    return [e["text"] for e in outcome.log if e["event"] == "say" and e["seat"] == 1 and e["text"].startswith(prefix)]


def assert_no_leak(outcome: GameOutcome, logged: list[dict[str, Any]]) -> None:
    assert logged and all(e.get("_secret") == MARK for e in logged)  # the poison was there
    assert not outcome.faults
    seen = [int(s.split()[1]) for s in said(outcome, "SEEN ")]
    assert sum(seen) > len(logged)  # it probed every event, nested ones too
    assert said(outcome, "LEAK") == []


def test_every_road_of_the_probe_shows_underscore_keys_of_a_raw_mapping() -> None:
    """The attack is real: on a read-only mapping that holds ``_`` keys each road shows them
    (but ``%(key)`` formatting, which the policy already strips)."""
    bot = load_bot()
    roads = [name for name, _ in bot.roads]
    raw = types.MappingProxyType({"event": "put", "_secret": MARK, "seat": 1})
    assert set(bot.leaks(raw)) == set(roads) - {"percent key"}
    assert len(roads) >= 30
    assert bot.leaks(freeze(dict(raw))) == []


def test_public_data_and_freeze_drop_underscore_keys_at_every_depth() -> None:
    for kind in ("put", "finish", "game", "fault", "say", "skip", "round", "end"):
        event = poisoned({"event": kind, "seat": 0, "kind": "exception", "text": "x", "players": []})
        data = public_data(event)
        assert "'_" not in repr(data) and MARK not in repr(data), kind
        assert data["event"] == kind
    frozen = freeze(poisoned({"event": "say", "a": [{"b": {"_c": 1, "d": 2}}]}))
    assert repr(frozen).count("'_") == 0 and frozen["a"][0]["b"]["d"] == 2


def test_in_process_under_the_policy_no_road_shows_an_underscore_key(poison: list[dict[str, Any]]) -> None:
    greedy = load_trusted(resolve_bot("greedy"))
    players = [greedy(5, 0), InProcessPlayer(load_bot(), "probe"), greedy(5, 2)]
    outcome = Referee(CONTEST).play(players, seed=5, bots=["greedy", "probe", "greedy"])
    assert_no_leak(outcome, poison)


def test_sandboxed_no_road_shows_an_underscore_key(poison: list[dict[str, Any]]) -> None:
    greedy = load_trusted(resolve_bot("greedy"))
    factory = SandboxFactory(read_bot_file(BOT), LIMITS)
    players = [greedy(5, 0), factory(5, 1), greedy(5, 2)]
    try:
        outcome = Referee(CONTEST).play(players, seed=5, bots=["greedy", "probe", "greedy"])
    finally:
        for p in players:
            p.close()
        factory.close()
    assert_no_leak(outcome, poison)


def test_the_workers_own_provisional_events_go_through_freeze() -> None:
    # The worker builds the events of the move in progress itself (before the referee logs
    # them); they reach the bot made read-only by the same freeze as every other event, so
    # whatever a future field holds, no ``_`` key survives at any depth.
    from arena.sandbox.python.botloop import Feed

    feed = Feed()
    feed.add([{"event": "finish", "seat": 1}])
    feed.provisional(poisoned({"event": "say", "seat": 0, "text": "x", "more": [{"deep": 1}]}))
    history = feed.history()
    assert repr(history).count("'_") == 0 and MARK not in repr(history)
    assert history[-1]["more"] == ({"deep": 1},)  # lists as tuples, as freeze makes them
    assert history[-1]["text"] == "x" and len(history) == 2
