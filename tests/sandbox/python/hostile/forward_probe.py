"""Probes everything the forward model hands out (the sampler, worlds, clones, a world's turn,
a policy's turn, results) for the real game: hidden state, writable shared objects, internals.
Says "LEAK <how>" when it reaches any; "MUTATED <how>" when a change to what it was given
changes a world; plays like greedy otherwise.
expect: clean
check: no-leak no-mutation
"""

import random

from arena import sample_world, sampler

NAMES = (
    "_g", "_seat", "_names", "_feed", "_table", "_move", "game", "hands", "log", "seed",
    "rng", "stock_list", "engine", "referee", "shared", "facts", "slots", "pool",
    "gi_frame", "f_globals", "func_globals", "im_self", "cell_contents",
)


class Bot:
    def move(self, turn):
        found = []
        mutated = []
        sample = sampler(turn)
        world = sample_world(turn, random)
        other = sample(random)
        things = [sample, world, other, world.clone(), world.turn(), world.top, world.hand(turn.seat)]
        for thing in things:
            for name in NAMES:
                try:
                    getattr(thing, name)
                    found.append(name)
                except Exception:
                    pass
                try:
                    setattr(thing, name, 1)
                    found.append("set " + name)
                except Exception:
                    pass
        # nothing given out is the world's own: changing it changes nothing
        puttable = world.puttable()
        before = len(puttable)
        puttable.clear()
        if len(world.puttable()) != before:
            mutated.append("puttable")
        actions = world.actions()
        actions.clear()
        if not world.actions():
            mutated.append("actions")
        try:
            world.hand(turn.seat)[0] = None
            mutated.append("hand")
        except Exception:
            pass
        # the world's turn acts on the world, never on the real table
        t = world.turn()
        if t.puttable():
            t.put(t.puttable()[0])
        try:
            t.say("from a world")
        except Exception:
            pass
        if len(turn.hand) != len(list(turn.hand)) or turn.finished:
            mutated.append("real turn")
        # a policy sees a turn over the world, never the real one
        seen = []

        def policy(pt):
            if pt is turn:
                seen.append("real turn")
            for name in ("_table", "_move"):
                try:
                    getattr(pt, name)
                    seen.append(name)
                except Exception:
                    pass

        world.clone().playout(policy, max_moves=3)
        found += seen
        # a world's history holds only the world's own events
        for event in world.clone().turn().history:
            if event["event"] == "deal" and not isinstance(event["stock"], int):
                found.append("deal cards")
        for how in found:
            turn.say("LEAK " + how)
        for how in mutated:
            turn.say("MUTATED " + how)
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
