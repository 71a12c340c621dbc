"""Reads the read-only mappings it is given (history events, nested ones, rules.points) by every
road that does not subscript: get, keys, items, values, copy, iter, dict(), {**m}, |, list,
in, str/repr/format/%/f-string, sorted, min, ChainMap, Counter, UserDict, a recursive walk...
Says "LEAK <road>" for each road that shows a key starting with "_" (or its value), and
"SEEN <n>" with the number of mappings it probed (the events new since its last move). (tests/sandbox/policy/test_policy_helpers.py puts "_"
keys into the events and checks that none arrives.)
expect: clean
check: no-leak
"""
import collections
import functools
import heapq
import itertools
import statistics

MARK = "SECRET-VALUE"


def shows(value):
    text = repr(value)
    return "'_" in text or MARK in text


class Bot:
    def __init__(self):
        self.done = 0
        self.roads = [
            ("get", lambda m: m.get("_secret")),
            ("get default", lambda m: [m.get(k, 0) for k in ("_secret", "_x")]),
            ("keys", lambda m: list(m.keys())),
            ("items", lambda m: list(m.items())),
            ("values", lambda m: list(m.values())),
            ("copy", lambda m: m.copy()),
            ("iter", lambda m: list(iter(m))),
            ("dict", lambda m: dict(m)),
            ("splat", lambda m: {**m}),
            ("or", lambda m: m | {}),
            ("ror", lambda m: {} | m),
            ("list", lambda m: list(m)),
            ("tuple set", lambda m: (tuple(m), set(m), frozenset(m))),
            ("in", lambda m: "'_secret'" if "_secret" in m else None),
            ("str", lambda m: str(m)),
            ("repr", lambda m: repr(m)),
            ("format", lambda m: format(m, "")),
            ("percent", lambda m: "%s %r" % (m, m)),
            ("percent key", lambda m: ("%(" + "_secret)s") % m),
            ("fstring", lambda m: f"{m} {m!r}"),
            ("sorted", lambda m: sorted(m)),
            ("min max", lambda m: (min(m), max(m))),
            ("reversed", lambda m: list(reversed(m))),
            ("zip enumerate", lambda m: (list(zip(m)), list(enumerate(m)))),
            ("map filter", lambda m: (list(map(str, m)), list(filter(None, m)))),
            ("keys ops", lambda m: (m.keys() | set(), m.items() ^ set(), m.keys() - {"event"})),
            ("chainmap", lambda m: dict(collections.ChainMap(m))),
            ("counter", lambda m: collections.Counter(m)),
            ("ordereddict", lambda m: collections.OrderedDict(m)),
            ("userdict", lambda m: collections.UserDict(m).data),
            ("defaultdict", lambda m: collections.defaultdict(None, m)),
            ("itertools", lambda m: list(itertools.chain(m, m.values()))),
            ("reduce", lambda m: functools.reduce(lambda a, b: a + "'" + b, m, "")),
            ("heapq", lambda m: heapq.nsmallest(50, m)),
            ("statistics", lambda m: statistics.multimode(m)),
            ("equal", lambda m: "'_secret'" if m != dict((k, m[k]) for k in list(m) if k[:1] != "_") else None),
        ]

    def leaks(self, mapping):
        """The roads that show a "_" key of ``mapping``."""
        found = []
        for name, road in self.roads:
            try:
                value = road(mapping)
            except Exception:
                continue
            if shows(value):
                found.append(name)
        return found

    def walk(self, value, out):
        """Every mapping inside ``value`` (a json-like walk through values and items)."""
        if isinstance(value, (list, tuple)):
            for v in value:
                self.walk(v, out)
        elif hasattr(value, "items") and hasattr(value, "keys") and not isinstance(value, str):
            out.append(value)
            for k, v in value.items():
                self.walk(v, out)

    def move(self, turn):
        history = turn.history
        mappings = [] if self.done else [turn.rules.points]
        self.walk(list(history[self.done:]), mappings)
        self.done = len(history)
        leaked = set()
        for m in mappings:
            leaked.update(self.leaks(m))
        for name in sorted(leaked):
            turn.say("LEAK " + name)
        turn.say("SEEN " + str(len(mappings)))
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
