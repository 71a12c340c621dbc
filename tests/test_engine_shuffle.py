"""The engine's own shuffle deals exactly what ``random.Random.shuffle`` deals."""

import random

from arena.cards import DECK
from arena.engine import shuffle


def test_shuffle_matches_the_stdlib_for_every_size_and_many_seeds():
    for seed in range(300):
        for size in (0, 1, 2, 3, 7, 8, 9, 16, 17, 31, 35, 36):
            ours, theirs = list(DECK[:size]), list(DECK[:size])
            a, b = random.Random(seed), random.Random(seed)
            shuffle(a, ours)
            b.shuffle(theirs)
            assert ours == theirs, (seed, size)
            assert a.getstate() == b.getstate()   # the same draws, so later ones agree too
