"""functools.lru_cache / cache copy the wrapped object's __dict__ into the wrapper: wrap Card and
classes of the allowed modules to read their raw class dictionaries (classmethod, property and
slot descriptors). Each must be refused. Says "LEAK <what>" for each wrapper it got.
expect: clean
check: no-leak
"""
import collections
import functools
import statistics
from functools import cache, lru_cache
from arena import Card


class Bot:
    def move(self, turn):
        targets = [Card, statistics.NormalDist, collections.Counter, statistics.mean, turn.puttable, turn.put]
        makers = [lru_cache, cache, lru_cache(maxsize=8), functools.lru_cache(None), functools.cache]
        for target in targets:
            for make in makers:
                try:
                    wrapper = make(target)
                except Exception:
                    continue
                turn.say("LEAK cache of " + str(target) + " " + str(getattr(wrapper, "parse", None)))
        if not turn.puttable() and turn.can_draw():
            turn.draw()
        while True:
            options = turn.puttable()
            if options:
                turn.put(options[0])
            elif not turn.can_finish() and turn.can_draw():
                turn.draw()
            else:
                break
        turn.finish()
