"""The forward model over the wire (issue 22): a program's ``sample`` and ``simulate`` requests.

The answers come from the engine's forward model (the same worlds and playouts as
in-process), are a function of the seat's view and the request's seed alone (two
hidden deals with one public history answer alike), and every malformed or
oversized request is a protocol violation.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from arena.botapi.forward import PLAYOUT_MOVES, sample_world
from arena.botapi.rollout import POLICIES
from arena.botapi.turn import PublicFeed, Turn
from arena.errors import IllegalMove
from arena.game.engine import Game
from arena.game.referee import EngineTable
from arena.sandbox.failures import ProtocolViolation, WorkerTimeout
from arena.sandbox.programs import wire as jsonwire
from arena.sandbox.programs.simulate import Searcher
from tests.botapi.test_forward_leak import record_actions, twins


def table_of(game: Game) -> EngineTable:
    return EngineTable(game, game.mover, [f"p{s}" for s in range(game.n)], PublicFeed())


def searcher(game: Game) -> Searcher:
    s = Searcher()
    s.names = tuple(f"p{i}" for i in range(game.n))
    return s


def request(line: dict[str, Any]) -> dict[str, Any]:
    """A request as the referee reads it: through the wire's own checks."""
    return jsonwire.parse_action(jsonwire.encode(line))


def plans_of(game: Game) -> list[list[list[Any]]]:
    move = game.move
    plans: list[list[list[Any]]] = [[["put", str(c), "h" if c.rank == "j" else None]] for c in move.puttable()]
    return [*plans, [["draw"]], [["finish"]], []]


def test_the_bounds_are_the_forward_models() -> None:
    assert jsonwire.SIM_MOVES == PLAYOUT_MOVES
    assert jsonwire.SIM_POLICIES == tuple(POLICIES)


def test_two_hidden_deals_with_one_public_history_give_the_same_answers() -> None:
    compared = 0
    for trial, _n, game, other in twins(30, 122, sizes=3):
        answers = []
        for g in (game, other):
            s, table = searcher(g), table_of(g)
            sim = {"action": "simulate", "seed": trial, "worlds": 2, "plans": plans_of(g)}
            answers.append([s.answer(table, request({"action": "sample", "seed": 2**64 - 1 - trial}), 5.0)])
            answers[-1].append(s.answer(table, request(sim), 5.0))
        assert answers[0] == answers[1]
        real = {str(c) for h in game.hands[1:] for c in h}
        shown = {c for h in answers[0][0]["hands"][1:] for c in h}
        assert len(shown) == len(real)  # the sample's cards, not the game's (which differ in `other`)
        compared += 1
    assert compared >= 10


def test_answers_are_the_forward_models_own() -> None:
    """`sampled` is sample_world(turn, Random(S)); `simulated` is clone, plan, play_move, playout."""
    game, _ = record_actions(3, 4, moves=5)
    before = (len(game.log), [list(h) for h in game.hands], list(game.stock))
    s, table = searcher(game), table_of(game)
    turn = Turn(game.move, EngineTable(game, game.mover, list(s.names), PublicFeed()))
    world = sample_world(turn, random.Random(77))
    got = s.answer(table, request({"action": "sample", "seed": 77}), 5.0)
    assert got == {
        "type": "sampled",
        "hands": [[str(c) for c in world.hand(i)] for i in range(3)],
        "stock": [str(c) for c in world.stock_cards()],
    }
    assert got["hands"][game.mover] == [str(c) for c in game.hands[game.mover]]  # its own hand, unchanged
    plans = plans_of(game)
    got = s.answer(table, request({"action": "simulate", "seed": 9, "worlds": 4, "plans": plans}), 5.0)
    rng = random.Random(9)
    worlds = [sample_world(turn, rng) for _ in range(4)]
    for plan, results in zip(plans, got["results"], strict=True):
        for w, result in zip(worlds, results, strict=True):
            c = w.clone()
            try:
                for act in plan:
                    c.apply(tuple(act))
            except IllegalMove as exc:
                assert result == {"error": f"{exc.rule} {exc.reason}"}
                continue
            if not plan or plan[-1][0] != "finish":
                c.play_move("heuristic")
            c.playout("heuristic", until="round")
            assert result == {
                "scores": list(c.scores()),
                "points": list(c.points()),
                "over": c.over,
                "in_round": c.in_round,
                "places": list(c.places()),
            }
    assert (len(game.log), [list(h) for h in game.hands], list(game.stock)) == before  # the real game did not move
    assert s.game_seconds > 0 and s.turn_seconds == s.game_seconds


def test_a_plan_illegal_in_a_world_is_an_error_for_it_alone() -> None:
    game, _ = record_actions(2, 6, moves=4)
    s, table = searcher(game), table_of(game)
    mine = str(game.hands[game.mover][0])
    theirs = next(str(c) for c in game.hands[1 - game.mover])
    plans = [[["put", "zz", None]], [["finish"], ["finish"], ["draw"]], [["put", theirs, None]], [["draw"]]]
    got = s.answer(table, request({"action": "simulate", "seed": 1, "worlds": 5, "plans": plans}), 5.0)
    bad, _, _, ok = got["results"]
    assert all(r["error"].startswith("R1.2 ") for r in bad)
    assert all("error" in r for r in got["results"][2])  # never in its hand in any world
    assert all("scores" in r for r in ok)
    assert mine  # (the mover has cards)


def test_a_request_stops_at_the_time_left_with_a_timeout() -> None:
    game, _ = record_actions(4, 8, moves=2)
    s, table = searcher(game), table_of(game)
    big = request({"action": "simulate", "seed": 3, "worlds": 64, "plans": [[]] * 64, "until": "game"})
    with pytest.raises(WorkerTimeout, match="per-move limit"):
        s.answer(table, big, 0.02)
    assert 0.02 <= s.turn_seconds < 1.0  # charged, and stopped soon after the limit
    with pytest.raises(WorkerTimeout):
        s.answer(table, request({"action": "sample", "seed": 3}), 0.0)


def test_a_request_reads_the_clock_while_it_samples_too() -> None:
    """One plan and 4,096 worlds: the time is over before the playouts begin, so the sampling
    itself must stop (it drew every world before its first look at the clock)."""
    from time import thread_time

    from arena.sandbox.programs.simulate import simulate

    game, _ = record_actions(2, 8, moves=2)
    real = searcher(game).sampler(table_of(game))
    drawn: list[int] = []

    def sample(rng: random.Random) -> Any:
        drawn.append(1)
        return real(rng)

    one_plan = request({"action": "simulate", "seed": 5, "worlds": 4096, "plans": [[]]})
    with pytest.raises(WorkerTimeout, match="per-move limit"):
        simulate(sample, random.Random(5), one_plan, thread_time() - 1.0)
    assert drawn == []  # nothing drawn past the deadline


@pytest.mark.parametrize(
    "line",
    [
        {"action": "sample"},
        {"action": "sample", "seed": -1},
        {"action": "sample", "seed": 2**64},
        {"action": "sample", "seed": 1.0},
        {"action": "sample", "seed": True},
        {"action": "sample", "seed": "1"},
        {"action": "sample", "seed": 1, "worlds": 2},
        {"action": "simulate", "seed": 1, "worlds": 1},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": []},
        {"action": "simulate", "seed": 1, "worlds": 0, "plans": [[]]},
        {"action": "simulate", "seed": 1, "worlds": 65, "plans": [[]] * 64},
        {"action": "simulate", "seed": 1, "worlds": 4097, "plans": [[]]},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[]] * 65},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[["draw"]] * 41]},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[]], "max_moves": 1001},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[]], "max_moves": -1},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[]], "policy": "mine"},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[]], "policy": None},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[]], "until": "move"},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": {"a": 1}},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [["draw"]]},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[[]]]},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[["put"]]]},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[["put", 9, None]]]},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[["put", "9h", 1]]]},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[["put", "9h", None, 1]]]},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[["draw", 1]]]},
        {"action": "simulate", "seed": 1, "worlds": 1, "plans": [[["say", "x"]]]},
    ],
)
def test_a_malformed_or_oversized_request_is_a_protocol_violation(line: dict[str, Any]) -> None:
    with pytest.raises(ProtocolViolation):
        request(line)


def test_a_request_within_bounds_gets_its_defaults() -> None:
    got = request({"action": "simulate", "seed": 2**64 - 1, "worlds": 64, "plans": [[["put", "jh", "s"]] * 40] * 64})
    assert (got["policy"], got["until"], got["max_moves"]) == ("heuristic", "round", PLAYOUT_MOVES)
