"""The forward model (issue 22): sampled worlds hold to the seat's facts and move by the engine's rules."""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import islice
from typing import Any

import pytest

from arena.botapi.forward import World, sample_world, sampler
from arena.botapi.knowledge import Facts, assign
from arena.botapi.rollout import heuristic
from arena.botapi.turn import PublicFeed, Turn
from arena.errors import IllegalMove
from arena.game.cards import DECK, Card
from arena.game.engine import Game
from arena.game.referee import EngineTable, Referee
from arena.seats.loader import load_trusted, resolve_bot


def positions(games: int, seed: int, chance: float = 0.25) -> Iterator[tuple[Game, Turn]]:
    """Moves of heuristic games at 2 to 6 players, with the mover's turn, at random points."""
    rng = random.Random(seed)
    for gi in range(games):
        n = 2 + gi % 5
        game = Game(n, seed=(seed, gi))
        feed = PublicFeed()
        while not game.over:
            if not game.in_round:
                game.start_round()
            if rng.random() < chance:
                yield game, Turn(game.move, EngineTable(game, game.mover, [f"p{s}" for s in range(n)], feed))
            heuristic(game, game.rng)


def test_samples_keep_every_public_fact_and_the_truth_fits_the_hard_ones() -> None:
    rng = random.Random(5)
    seen = {"reshuffle": 0, "narrowed": 0, "positions": 0}
    for game, turn in positions(25, 1):
        me = game.mover
        world = sample_world(turn, rng)
        g = world._g
        assert sorted(c.index for c in [*sum(g.hands, []), *g.stock, *g.pile]) == list(range(36))
        assert [len(h) for h in g.hands] == [len(h) for h in game.hands]
        assert g.hands[me] == game.hands[me] and g.pile == game.pile and g.round_pile == game.round_pile
        assert len(g.stock) == len(game.stock) and g.drawn == game.drawn and g.skips == game.skips
        m, real = g.move, game.move
        assert (m.seat, m.top, m.suit, m.put, m.drew, m.first, m.stock, m.pile_size) == (
            real.seat,
            real.top,
            real.suit,
            real.put,
            real.drew,
            real.first,
            real.stock,
            real.pile_size,
        )
        # The hard facts are facts: the true hidden cards fit the slots they were given.
        facts = Facts(turn)
        for s in range(game.n):
            if s != me:
                truth = sum(1 << c.index for c in game.hands[s])
                assert assign([h for h, _ in facts.slots[s]], truth, rng) is not None
                seen["narrowed"] += any(h != (1 << 36) - 1 for h, _ in facts.slots[s])
        truth = sum(1 << c.index for c in game.stock)
        assert assign([facts.stock_mask] * len(game.stock), truth, rng) is not None
        seen["reshuffle"] += any(e["event"] == "reshuffle" for e in turn.history)
        seen["positions"] += 1
    assert seen["positions"] > 200 and seen["reshuffle"] > 15 and seen["narrowed"] > 50, seen


def test_the_heuristic_playout_policy_is_bots_heuristic_card_for_card() -> None:
    bot = load_trusted(resolve_bot("heuristic"))
    for seed in range(6):
        n = 2 + seed % 5
        outcome = Referee().play([bot(seed, s) for s in range(n)], seed=seed)
        game = Game(n, seed=seed)
        while not game.over:
            if not game.in_round:
                game.start_round()
            heuristic(game, game.rng)
        skip = ("game", "end")
        assert [e for e in outcome.log if e["event"] not in skip] == [e for e in game.log if e["event"] not in skip]


def one_position(n: int = 3, seed: int = 2, at: int = 7) -> tuple[Game, Turn]:
    for i, found in enumerate(positions(1 if n == 2 else n - 1, seed, chance=1.0)):
        if found[0].n == n and i >= at:
            return found
    raise AssertionError("no position")


def test_the_same_seed_gives_the_same_world_and_a_clone_is_independent() -> None:
    game, turn = one_position()
    a = sample_world(turn, random.Random(9))
    b = sampler(turn)(random.Random(9))
    assert [a.hand(s) for s in range(3)] == [b.hand(s) for s in range(3)] and a.stock_cards() == b.stock_cards()
    c = a.clone()
    c.playout("heuristic", until="game")
    assert c.over and not a.over and a.hand(a.seat) == tuple(game.hands[game.mover])
    d = a.clone()
    d.playout("heuristic", until="game")
    assert d.scores() == c.scores()  # same cards, same generator: the same game


def test_actions_are_the_legal_ones_and_act_through_the_checked_path() -> None:
    rng = random.Random(3)
    for _, turn in islice(positions(6, 4, chance=0.2), 40):  # each turn is live: used at once
        world = sample_world(turn, rng)
        acts = world.actions()
        assert ("finish",) in acts if turn.can_finish() else ("finish",) not in acts
        assert {a[1] for a in acts if a[0] == "put"} == set(turn.puttable())
        world.apply(rng.choice(acts))
    world = sample_world(turn, rng)
    held = set(world.hand(world.seat))
    stranger = next(c for c in DECK if c not in held)
    with pytest.raises(IllegalMove):
        world.put(stranger)
    with pytest.raises(IllegalMove):
        world.apply(("bogus",))
    with pytest.raises(ValueError):
        world.playout("nonsense")
    with pytest.raises(ValueError):
        world.hand(99)


def test_a_bot_policy_plays_through_a_turn_over_the_world() -> None:
    """The heuristic bot's own ``move`` as a policy plays the same round as the built-in one."""
    bot = load_trusted(resolve_bot("heuristic"))(1, 0).bot
    for _, turn in islice(positions(5, 6, chance=0.1), 12):
        world = sample_world(turn, random.Random(4))
        a, b = world.clone(), world.clone()
        a.playout("heuristic")
        b.playout(bot.move)
        assert a.scores() == b.scores() and a.points() == b.points()
    seen: list[Any] = []

    def lazy(t: Any) -> None:  # leaves every move to the fallback
        seen.append(t.seat)

    c = world.clone()
    c.playout(lazy, max_moves=5)
    assert len(seen) == 5


def reachable(root: Any, limit: int = 200_000) -> list[Any]:
    """Every object reachable from ``root`` through instance data (not through types,
    modules or functions, whose globals reach everything)."""
    import gc
    import types

    stop = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
    seen = {id(root)}
    out = [root]
    todo = [root]
    while todo and len(out) < limit:
        for ref in gc.get_referents(todo.pop()):
            if id(ref) not in seen and not isinstance(ref, stop):
                seen.add(id(ref))
                out.append(ref)
                todo.append(ref)
    return out


def test_a_world_holds_no_reference_to_the_real_game() -> None:
    game, turn = one_position(4, 3, 10)
    real = {id(x) for x in (game, game.log, game.hands, game.stock, game.pile, game.round_pile, game.move, turn)}
    real |= {id(h) for h in game.hands} | {id(e) for e in game.log} | {id(game.move.put), id(game.scores)}
    real |= {id(turn._table), id(turn._table.shared)}  # type: ignore[attr-defined]
    world = sample_world(turn, random.Random(1))
    for thing in (world, world.clone(), sampler(turn), world.turn()):
        found = reachable(thing)
        assert len(found) < 200_000
        assert not [x for x in found if id(x) in real], type(thing)
    assert any(x is world._g for x in reachable(world))  # the walk does reach what a world holds
    # What a world hands out is fresh: changing it changes nothing.
    hand = world.hand(0)
    assert isinstance(hand, tuple) and isinstance(world.puttable(), list)
    world.puttable().clear()
    assert world.puttable() == world.clone().puttable()


def test_world_state_is_out_of_reach_of_bot_code() -> None:
    """Under the code policy a world is a plain receiver of public methods; its slots are ``_``."""
    assert all(name.startswith("_") for name in World.__slots__)
    public = [n for n in dir(World) if not n.startswith("_")]
    for name in public:
        value = getattr(World, name)
        assert callable(value) or isinstance(value, property), name
    assert Card("jd") in DECK  # cards handed out are the interned, immutable ones
