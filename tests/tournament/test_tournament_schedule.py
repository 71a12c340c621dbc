"""The tournament schedule: round robin, balanced tables, duplicate seating, keys and seeds."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from arena.game.rules import CONTEST
from arena.tournament.backends.games import GameRunner, Job
from arena.tournament.plan.schedule import (
    GameKey,
    Schedule,
    balanced_table_count,
    default_sizes,
    parse_sizes,
    size_schedule,
)


@pytest.mark.parametrize(
    "text, sizes", [("4", (4,)), ("2,4,6", (2, 4, 6)), ("2-6", (2, 3, 4, 5, 6)), ("2-3,5", (2, 3, 5)), ("4,4", (4,))]
)
def test_parse_sizes(text: str, sizes: tuple[int, ...]) -> None:
    assert parse_sizes(text) == sizes


@pytest.mark.parametrize("text", ["", "1", "7", "2-7", "x", "5-3", "4,"])
def test_parse_sizes_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_sizes(text)


def test_default_size_is_four_or_all_bots() -> None:
    assert [default_sizes(n) for n in (2, 3, 4, 9)] == [(2,), (3,), (4,), (4,)]


def test_game_key_round_trips() -> None:
    key = GameKey(4, 12, 3, 1)
    assert str(key) == "4p-t12-d3-r1"
    assert GameKey.parse(str(key)) == key
    with pytest.raises(ValueError):
        GameKey.parse("4-12-3-1")


@pytest.mark.parametrize("bots", [2, 5, 7])
def test_round_robin_every_combination_and_rotation_once(bots: int) -> None:
    sizes = [k for k in range(2, 7) if k <= bots]
    s = Schedule.build(bots, sizes, deals=3, seed=11)
    keys = list(s.keys())
    assert len(keys) == len(set(keys)) == s.total_games
    assert keys == sorted(keys)
    for size in s.sizes:
        assert size.kind == "round-robin"
        assert sorted(size.tables) == list(itertools.combinations(range(bots), size.size))
    # per (size, table, deal): K games, one seed, every bot of the table at every seat exactly once
    blocks: dict[tuple[int, int, int], list[GameKey]] = {}
    for k in keys:
        blocks.setdefault((k.size, k.table, k.deal), []).append(k)
    seeds = set()
    for (size, table, _deal), block in blocks.items():
        assert sorted(k.rotation for k in block) == list(range(size))
        members = set(s.by_size(size).tables[table])
        seatings = [s.seating(k) for k in block]
        for seating in seatings:
            assert sorted(seating) == sorted(members)
        for seat in range(size):
            assert {seating[seat] for seating in seatings} == members
        block_seeds = {s.game_seed(k) for k in block}
        assert len(block_seeds) == 1
        seeds |= block_seeds
    assert len(seeds) == len(blocks)  # a new deal for every (size, table, deal)


def test_seating_order_varies_between_deals() -> None:
    """Who sits after whom changes from deal to deal, not only the seat numbers."""
    s = Schedule.build(6, [6], deals=20, seed=0)
    orders = {s.deal_order(GameKey(6, 0, d, 0)) for d in range(20)}
    cyclic = {min(o[i:] + o[:i] for i in range(6)) for o in orders}
    assert len(cyclic) > 10


def test_seeds_follow_from_tournament_seed() -> None:
    a = Schedule.build(5, [3], deals=2, seed=1)
    b = Schedule.build(5, [3], deals=2, seed=1)
    c = Schedule.build(5, [3], deals=2, seed=2)
    keys = list(a.keys())
    assert [a.game_seed(k) for k in keys] == [b.game_seed(k) for k in keys]
    assert [a.seating(k) for k in keys] == [b.seating(k) for k in keys]
    assert [a.game_seed(k) for k in keys] != [c.game_seed(k) for k in keys]
    assert all(0 <= a.game_seed(k) < 2**63 for k in keys)  # fits an SQLite INTEGER


def test_balanced_schedule_perfect_when_a_design_exists() -> None:
    # 9 bots in threes: the affine plane of order 3, every pair exactly once in 12 tables
    s = size_schedule(9, 3, max_tables=12)
    assert s.kind == "balanced" and len(s.tables) == 12
    assert set(s.pair_counts(9).values()) == {1}
    assert set(s.seat_counts(9)) == {4}
    # 7 bots in threes, 14 tables: two Fano planes, every pair twice. The annealer finds the
    # Fano plane from few starts (about 1 in 8 seeds); this seed gives one.
    s = size_schedule(7, 3, max_tables=20, seed=25)
    assert len(s.tables) == 14 and set(s.pair_counts(7).values()) == {2}
    assert "each pair shares 2 tables" in s.describe(7)


def test_balanced_schedule_close_to_even() -> None:
    bots, k = 14, 4
    s = size_schedule(bots, k, max_tables=300)
    assert s.kind == "balanced" and math.comb(bots, k) > 300
    assert len(s.tables) == balanced_table_count(bots, k, 300) <= 300
    pairs = list(s.pair_counts(bots).values())
    target = len(s.tables) * k * (k - 1) / (bots * (bots - 1))
    assert min(pairs) >= math.floor(target) - 1 and max(pairs) <= math.ceil(target) + 1
    assert max(s.seat_counts(bots)) - min(s.seat_counts(bots)) <= 1
    assert all(len(set(t)) == k for t in s.tables)
    assert s == size_schedule(bots, k, max_tables=300)  # deterministic
    assert "balanced schedule of" in s.describe(bots)


def test_schedule_refuses_table_larger_than_field() -> None:
    with pytest.raises(ValueError, match="at least 5 bots"):
        size_schedule(4, 5)


def test_a_game_replays_alone() -> None:
    """A game's key is enough to play it again, with the same result."""
    from arena.seats.loader import resolve_bot

    srcs = tuple(resolve_bot(n) for n in ("greedy", "random", "random"))
    s = Schedule.build(3, [3], deals=2, seed=5)
    job = Job(srcs, ("greedy", "random", "random#2"), (True,) * 3, CONTEST.to_dict(), s)
    keys = list(s.keys())
    first = [GameRunner(job).play(k) for k in keys]
    again = GameRunner(job).play(keys[3])
    assert (again.places, again.scores, again.seating, again.seed) == (
        first[3].places,
        first[3].scores,
        first[3].seating,
        first[3].seed,
    )
    # the rotations of a deal really are the same cards: seat 0's first hand is identical
    block = [GameRunner(Job(srcs, job.labels, job.trusted, job.rules, s, keep_logs=True)).play(k) for k in keys[:3]]
    hands = [next(e for e in r.log if e["event"] == "deal")["hands"] for r in block]
    assert hands[0] == hands[1] == hands[2]
    assert Counter(r.seating[0] for r in block) == Counter({0: 1, 1: 1, 2: 1})


def test_runner_keeps_few_process_holding_factories(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a large field a worker closes the least recently used sandbox factories."""
    from arena.seats.loader import load_trusted, resolve_bot
    from arena.tournament.backends import games as worker

    opened: list[str] = []
    closed: list[str] = []

    class Holding:
        def __init__(self, src: object, trusted: bool = False, limits: object = None) -> None:
            self.inner = load_trusted(src)  # type: ignore[arg-type]
            self.name = self.inner.name
            self.label = f"{len(opened)}"
            opened.append(self.label)

        def __call__(self, seed: int, seat: int) -> object:
            assert self.label not in closed
            return self.inner(seed, seat)

        def close(self) -> None:
            closed.append(self.label)

    monkeypatch.setattr(worker, "make_factory", Holding)
    src = resolve_bot("greedy")
    s = Schedule.build(8, [2], deals=1, seed=0)
    job = Job((src,) * 8, tuple(f"g{i}" for i in range(8)), (False,) * 8, CONTEST.to_dict(), s)
    runner = GameRunner(job, keep=3)
    for key in s.keys():
        runner.play(key)
        assert len(opened) - len(closed) <= 3
    assert len(opened) > 8  # evicted factories were made again when needed
    runner.close()
    assert sorted(opened) == sorted(closed)


def test_index_is_the_place_in_key_order() -> None:
    s = Schedule.build(5, [2, 3, 4], deals=2, seed=0)
    assert [s.index(k) for k in s.keys()] == list(range(s.total_games))
    with pytest.raises(KeyError):
        s.index(GameKey(5, 0, 0, 0))


def test_runner_keeps_a_whole_field_of_templates_when_memory_allows() -> None:
    """Issue 10 item 4: evicting templates in a 30-bot field restarted one every ~12 games
    (28,555 fresh interpreters over a 339,300-game final); the budget keeps all 30."""
    from arena.seats.loader import resolve_bot
    from arena.tournament.backends.games import MIN_KEEP, TEMPLATE_BYTES, template_budget

    assert template_budget(available=24 * 2**30, cpus=2) >= 30
    assert template_budget(available=30 * 4 * 2 * TEMPLATE_BYTES, cpus=2) == 30
    assert template_budget(available=0, cpus=2) == MIN_KEEP  # never below the floor
    s = Schedule.build(3, [2], deals=1, seed=0)
    job = Job((resolve_bot("greedy"),) * 3, ("a", "b", "c"), (True,) * 3, CONTEST.to_dict(), s)
    assert GameRunner(job).keep >= MIN_KEEP
    assert GameRunner(job, keep=3).keep == 3


@pytest.mark.parametrize("deals", [1, 3, 40])
def test_streams_are_one_rotation_of_a_table_over_different_deals(deals: int) -> None:
    import random

    from arena.tournament.plan.schedule import STREAM_DEALS, stream_chunks, stream_of, streams

    s = Schedule.build(6, [2, 5], deals=deals, seed=4)
    keys = list(s.keys())
    rng = random.Random(deals)
    for given in (keys, [k for k in keys if rng.random() < 0.6]):  # all games, or what a resume has left
        found = streams(given)
        assert sorted(k for stream in found for k in stream) == sorted(given)  # each game in one stream
        for stream in found:
            assert len({(k.size, k.table, k.rotation) for k in stream}) == 1  # one rotation of one table
            assert [k.deal for k in stream] == sorted({k.deal for k in stream})  # in deal order, none twice
            assert len({s.game_seed(k) for k in stream}) == len(stream)  # no deal (seed) shared
            assert len(stream) <= STREAM_DEALS and len({k.deal // STREAM_DEALS for k in stream}) == 1
            assert len({tuple(sorted(s.seating(k))) for k in stream}) == 1  # the same bots throughout
        if given is keys:
            assert max(map(len, found)) == min(deals, STREAM_DEALS)
        for size in (1, 7, 32):
            chunks = stream_chunks(given, size)
            assert [k for c in chunks for k in c] == [k for stream in found for k in stream]
            for chunk in chunks:  # a chunk holds whole streams
                ids = {stream_of(k) for k in chunk}
                assert sum(len(st) for st in found if stream_of(st[0]) in ids) == len(chunk)
