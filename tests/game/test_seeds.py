"""The seed derivation and the deal's shuffle (arena/game/seeds.py): their outputs are the records' law.

``derive_seed`` is pinned to its definition (HMAC-SHA256 keyed by the key's text over the
parts' compact JSON), ``SeedKey`` to ``derive_seed``, and ``shuffle`` to
``random.Random.shuffle`` draw for draw, so a faster path can never change a deal.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
from typing import Any

import pytest

from arena.game.cards import DECK
from arena.game.seeds import SeedKey, derive_seed, shuffle

KEYS: list[Any] = [0, 7, 2026, -5, 2**130 + 17, 2**200, "abc", "\u00fc\udcff", 1.5, None]
PARTS: list[tuple[Any, ...]] = [
    ("round", 1),
    ("round", 99),
    ("bot", 3),
    ("fallback",),
    ("bots", "play", 12),
    ("deal", "tournament", 4, 2, 7),
    ("order", "\u00fc\udcff", 2.5, None, [1, "a"], (2, 3)),
    (),
]


def by_definition(key: Any, *parts: Any) -> int:
    """derive_seed as docs and seeds.py define it, written out with the stdlib's plain calls."""
    message = json.dumps(parts, separators=(",", ":"), default=str).encode("utf-8", "surrogatepass")
    mac = hmac.new(str(key).encode("utf-8", "surrogatepass"), message, hashlib.sha256)
    return int.from_bytes(mac.digest()[:8], "big")


@pytest.mark.parametrize("key", KEYS)
def test_derive_seed_is_keyed_hmac_sha256_over_compact_json(key: Any) -> None:
    for parts in PARTS:
        assert derive_seed(key, *parts) == by_definition(key, *parts), parts


def test_derive_seed_and_the_deal_pinned() -> None:
    # Values from before the derivation was made cheaper (commit 3a24193): any change here
    # changes every deal of every record, so it must never happen by accident.
    assert derive_seed(7, "round", 1) == 7545058110620166437
    assert derive_seed(2**130 + 17, "bot", 3) == 9910556341795396361
    assert derive_seed("abc", "fallback") == 6483431511413472717
    deck = list(DECK)
    shuffle(random.Random(derive_seed(7, "round", 1)), deck)
    assert " ".join(c._text for c in deck[:10]) == "jd ks 8d ac 10d 8c jc qs 6c 6h"


@pytest.mark.parametrize("key", KEYS)
def test_seed_key_derives_what_derive_seed_derives(key: Any) -> None:
    keyed = SeedKey(key)
    for parts in PARTS * 2:  # and again: deriving must not change the key's state
        assert keyed.derive(*parts) == derive_seed(key, *parts), parts


def test_seed_key_labels_are_separate_domains() -> None:
    keyed = SeedKey(2026)
    seeds = [keyed.derive("round", r) for r in range(1, 60)] + [keyed.derive("fallback")]
    assert len(set(seeds)) == len(seeds)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 35, 36, 100])
def test_shuffle_matches_random_shuffle_draw_for_draw(size: int) -> None:
    for seed in range(300):
        ours, theirs = list(range(size)), list(range(size))
        a, b = random.Random(seed), random.Random(seed)
        shuffle(a, ours)
        b.shuffle(theirs)
        assert ours == theirs, (seed, size)
        assert a.getstate() == b.getstate(), (seed, size)  # the same draws, so later ones agree too


def test_shuffle_after_a_reseed_matches_too() -> None:
    a, b = random.Random(0), random.Random(0)
    for r in range(1, 50):
        seed = derive_seed(99, "round", r)
        a.seed(seed)
        b.seed(seed)
        ours, theirs = list(DECK), list(DECK)
        shuffle(a, ours)
        b.shuffle(theirs)
        assert ours == theirs
        pile_a, pile_b = ours[: r % 30 + 2], theirs[: r % 30 + 2]  # a reshuffle of the pile, mid-round
        shuffle(a, pile_a)
        b.shuffle(pile_b)
        assert pile_a == pile_b


def test_kept_seed_keys_derive_what_derive_seed_derives() -> None:
    """``seed_key`` keeps a few keys' MACs (a match's master seed, a game's bot key): the same
    seeds as ``derive_seed``, whichever keys come between, and keys whose texts differ never mixed."""
    from arena.game.seeds import seed_key
    from arena.playing.match import game_seeds
    from arena.seats.loader import load_trusted, resolve_bot

    keys = [*KEYS, *range(20), 2**64 + 1, "7", 7.0]
    for _ in range(3):  # keys evicted and made again between rounds
        for key in keys:
            for parts in PARTS:
                assert seed_key(key).derive(*parts) == derive_seed(key, *parts), (key, parts)
    assert seed_key(7).derive("x") != seed_key(7.0).derive("x")  # "7" and "7.0": two keys
    for g in range(30):
        assert game_seeds(2026, g) == (derive_seed(2026, "deal", "play", g), derive_seed(2026, "bots", "play", g))
    factory = load_trusted(resolve_bot("random"))
    for bot_key in (5, 2**70, 5):
        for seat in range(3):
            expected = random.Random(derive_seed(bot_key, "bot", seat)).random()
            assert factory(bot_key, seat).bot.move.__globals__["random"].random() == expected


def test_the_message_cache_never_mixes_equal_keys_of_other_types() -> None:
    # The attack on a cache keyed by value: 1 == True == 1.0, but their JSON (and so the
    # derived seeds) differ, in whichever order they come.
    from arena.game.seeds import derive_seed as derive

    plain = derive(7, "x", 1)
    assert derive(7, "x", True) != plain and derive(7, "x", 1.0) != plain
    assert derive(7, "x", True) == derive(7, "x", True) and derive(7, "x", 1) == plain
    assert derive(7, "y", True) != derive(7, "y", 1)
