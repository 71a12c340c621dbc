"""functools.total_ordering writes __gt__/__le__/__ge__ into the class it is given: give it Card
(the referee's class), classes of the allowed modules and the arena's; each call must be refused.
Says "MUTATED <class>" for each one that went through.
expect: clean
check: no-mutation
"""
import collections
import functools
import random
import statistics
from functools import total_ordering
from arena import Card, IllegalMove


class Bot:
    def move(self, turn):
        targets = [Card, collections.Counter, collections.UserList, collections.UserString, statistics.Fraction,
                   statistics.NormalDist, random.Random, IllegalMove]
        for cls in targets:
            for helper in (total_ordering, functools.total_ordering):
                try:
                    helper(cls)
                except Exception:
                    continue
                turn.say("MUTATED total_ordering " + str(cls))
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
