"""The run-time guards written into the bot's code (arena/sandbox/policy/inline.py, pass 4).

For each relaxation, the attack that would beat a wrong one: the check must still refuse
in every place a read, subscript or write can stand (function bodies, comprehensions,
generator expressions, lambdas, class bodies, default arguments, nested expressions), the
fast paths must take only the exact types they claim (subclasses, look-alikes and
shadowed builtins go the slow road), and the code must behave exactly as the guard
calls did.
"""

from __future__ import annotations

import collections
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest
from test_policy_static import names_in

from arena.botapi.turn import PlayerInfo, Turn
from arena.errors import BotLoadError
from arena.game.cards import RANKS, SUITS, Card
from arena.game.referee import Referee
from arena.sandbox import check_source
from arena.sandbox.policy.compiler import compile_bot, instantiate
from arena.sandbox.policy.formatting import FORMAT_NAMES, is_str_formatter
from arena.sandbox.policy.guards import PLAIN_RECEIVERS
from arena.sandbox.policy.transform import GuardCalls
from arena.seats.loader import InProcessPlayer
from arena.trust.botsource import BotSource, read_bot_file

ROOT = Path(__file__).resolve().parents[3]


def load(body: str, header: str = "", calls: bool = False) -> Any:
    code = (
        textwrap.dedent(header)
        + "\n\nclass Bot:\n    def move(self, turn):\n        pass\n\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
    )
    src = BotSource("t", code, "t.py")
    check_source(src)
    return instantiate(compile_bot(src, GuardCalls) if calls else compile_bot(src), src, 1)


class Holder:
    """A foreign object (not the bot's) with dangerous public attributes."""

    def __init__(self) -> None:
        self.m = types  # a module the bot did not import
        self.f = str.format  # unbound str.format under another name
        self.g = "x{0.real}".format  # bound, with a walking template
        self.h = type("S", (str,), {})("{0.real}").format  # bound to a str subclass
        self.inner = types.SimpleNamespace(m=types)
        self.ok = 7
        self.items = [1, 2]


# -- the value check, everywhere a read can stand ---------------------------------------

PLACES = {
    "function": "def f(self, h):\n    return h.{a}\n",
    "comprehension": "def f(self, h):\n    return [h.{a} for i in range(1)][0]\n",
    "comprehension iterable": "def f(self, h):\n    return [x for x in [h.{a}]][0]\n",
    "generator": "def f(self, h):\n    return next(h.{a} for i in range(1))\n",
    "lambda": "def f(self, h):\n    return (lambda: h.{a})()\n",
    "class body": "def f(self, h):\n    class A:\n        x = h.{a}\n    return A.x\n",
    "default": "def f(self, h):\n    def g(x=h.{a}):\n        return x\n    return g()\n",
    "nested": "def f(self, h):\n    return h.inner.m if '{a}' == 'm' else h.{a}\n",
    "call target": "def f(self, h):\n    return h.{a}('{{0.real}}', 1)\n",
    "comprehension in class": (
        "def f(self, h):\n    class A:\n        x = [h.{a} for i in range(1)]\n    return A.x[0]\n"
    ),
    "argument": "def f(self, h):\n    return self.keep(h.{a})\n\ndef keep(self, x):\n    return x\n",
}


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("attr", ["m", "f", "g", "h"])
def test_a_module_or_str_format_by_another_name_is_refused_wherever_the_read_stands(place: str, attr: str) -> None:
    bot = load(PLACES[place].format(a=attr))
    with pytest.raises(AttributeError, match="module|str.format"):
        bot.f(Holder())


@pytest.mark.parametrize("place", sorted(PLACES))
def test_plain_values_read_the_same_wherever_the_read_stands(place: str) -> None:
    if place == "call target":
        return
    for calls in (False, True):
        assert load(PLACES[place].format(a="ok"), calls=calls).f(Holder()) == 7


def test_the_fast_receiver_types_take_exact_types_only() -> None:
    # A subclass of list/dict/tuple/str, a namedtuple (PlayerInfo's look-alike): each may
    # carry a class attribute; none takes the plain road.
    class L(list):  # type: ignore[type-arg]
        m = types

    class D(dict):  # type: ignore[type-arg]
        m = types

    class S(str):
        g = str.format

    lookalike = collections.namedtuple("PlayerInfo", "m")(types)
    bot = load("def f(self, x, name):\n    return x.m if name == 'm' else x.g\n")
    for obj, name in ((L(), "m"), (D(), "m"), (lookalike, "m"), (S("{0.real}"), "g")):
        with pytest.raises(AttributeError):
            bot.f(obj, name)


def test_every_fast_receiver_type_has_only_harmless_public_attributes() -> None:
    # The claim PLAIN_RECEIVERS rests on, checked on live instances: no instance dict, and
    # no public attribute that is a module or str.format (str's own format/format_map never
    # take this road: they are read through the formatting guard).
    turns: list[Turn] = []

    class Probe:
        def move(self, turn: Turn) -> None:
            if len(turns) < 3:
                turns.append(turn)
                check(turn)
            while turn.puttable() and not turn.can_finish():
                turn.put(turn.puttable()[0], "s" if turn.puttable()[0].rank == "j" else None)
            while not turn.can_finish() and turn.can_draw():
                turn.draw()
            turn.finish()

    def check(obj: Any) -> None:
        assert type(obj) in PLAIN_RECEIVERS
        assert not hasattr(obj, "__dict__"), type(obj)
        for name in dir(obj):
            if name.startswith("_") or (type(obj) is str and name in FORMAT_NAMES):
                continue
            try:
                value = getattr(obj, name)
            except Exception:  # noqa: BLE001 - a property that does not apply now
                continue
            assert type(value) is not types.ModuleType, (type(obj), name)
            assert not is_str_formatter(value), (type(obj), name)
            if type(obj) is Turn and type(value) in (tuple, list):
                for item in value:
                    if type(item) in (Card, PlayerInfo):
                        check(item)

    Referee().play([InProcessPlayer(Probe(), "p"), InProcessPlayer(Probe(), "q")], seed=3)
    assert turns
    for obj in [
        *(Card(r + s) for r in RANKS for s in SUITS),
        [1],
        (1,),
        {1: 2},
        {1},
        frozenset({1}),
        "s",
        1,
        1.5,
        True,
        range(2),
        types.MappingProxyType({"a": 1}),
        collections.deque([1]),
    ]:
        check(obj)


# -- values consumed on the spot need no check, and leak nothing ------------------------


@pytest.mark.parametrize(
    "expr, outcome",
    [
        ("h.m == 'x'", False),
        ("h.m != None", True),
        ("h.m is None", False),
        ("h.m in ('a', 'b')", False),
        ("not h.m", False),
        ("1 if h.m else 2", 1),
        ("h.m + 1", TypeError),
        ("-h.m", TypeError),
        ("h.m[0]", TypeError),
        ("len(h.m)", TypeError),
        ("list(h.m)", TypeError),
        ("[x for x in h.m]", TypeError),
        ("h.f == 1", False),
    ],
)
def test_a_consumed_value_is_compared_or_refused_by_the_interpreter(expr: str, outcome: Any) -> None:
    bot = load(f"def f(self, h):\n    return {expr}\n")
    if isinstance(outcome, type):
        with pytest.raises(outcome):
            bot.f(Holder())
    else:
        assert bot.f(Holder()) == outcome


def test_a_comparison_with_a_bot_object_keeps_the_check() -> None:
    # The attack on a wrong relaxation: the bot's own __eq__ (allowed to bots) would be
    # handed the module by the reflected comparison.
    bot = load(
        """
        def f(self, h):
            p = P()
            h.m == p
            return p.got
        """,
        header="class P:\n    got = None\n    def __eq__(self, other):\n        P.got = other\n        return False\n",
    )
    with pytest.raises(AttributeError, match="module"):
        bot.f(Holder())


@pytest.mark.parametrize(
    "header, body",
    [
        ("def len(x):\n    return x\n", "def f(self, h):\n    return len(h.m)\n"),
        ("", "def f(self, h, len=lambda x: x):\n    return len(h.m)\n"),
        ("", "def f(self, h):\n    sorted = lambda x: x\n    return sorted(h.m)\n"),
        ("from arena import Card as list\n", "def f(self, h):\n    return list(h.m)\n"),
        ("", "def f(self, h):\n    return max(h.m, h.ok)\n"),
        ("", "def f(self, h):\n    return min([1], default=h.m)\n"),
    ],
)
def test_a_shadowed_builtin_or_a_second_argument_keeps_the_check(header: str, body: str) -> None:
    bot = load(body, header=header)
    with pytest.raises(AttributeError, match="module"):
        bot.f(Holder())


def test_a_further_read_through_a_consumed_position_is_checked() -> None:
    # h.m is the receiver of a further read: checked, though that read's value is consumed
    bot = load("def f(self, h):\n    return h.m.ModuleType == 1\n")
    with pytest.raises(AttributeError, match="module"):
        bot.f(Holder())
    bot = load("def f(self, h):\n    return h.inner.m[0]\n")  # consumed: the interpreter refuses
    with pytest.raises(TypeError, match="not subscriptable"):
        bot.f(Holder())


# -- subscripts ---------------------------------------------------------------------------

SECRET = types.MappingProxyType({"_secret": 1, "a": 2})


@pytest.mark.parametrize(
    "body",
    [
        "def f(self, d, k):\n    return d[k]\n",
        "def f(self, d, k):\n    return [d[k] for i in range(1)]\n",
        "def f(self, d, k):\n    return next(d[k] for i in range(1))\n",
        "def f(self, d, k):\n    return (lambda: d[k])()\n",
        "def f(self, d, k):\n    class A:\n        x = d[k]\n    return A.x\n",
        "def f(self, d, k):\n    return [x for x in [d[k]]]\n",
        "def f(self, d, k):\n    return [1, 2][d[k]]\n",
        "def f(self, d, k):\n    return d[[k][0]]\n",
        "def f(self, d, k):\n    return d[{'a': k}['a']]\n",
        "def f(self, d, k):\n    return d[S(k)]\n",
        "def f(self, d, k):\n    return d[T(k)]\n",
    ],
)
def test_an_underscore_key_of_a_read_only_mapping_is_refused_wherever_the_subscript_stands(body: str) -> None:
    # S: a str subclass (type(k) is not str: the old guard let it through); T: one whose
    # own startswith lies.
    header = "class S(str):\n    pass\n\nclass T(str):\n    def startswith(self, x):\n        return False\n"
    bot = load(body, header=header)
    with pytest.raises(KeyError):
        bot.f(SECRET, "_secret")


def test_nested_subscripts_give_the_right_items_and_stay_small() -> None:
    bot = load("def f(self, d, l, k):\n    return l[d[k]], d[l[0]], l[l[l[0]]]\n")
    assert bot.f(types.MappingProxyType({"a": 1, 0: "a"}), [0, 5], "a") == (5, "a", 0)
    deep = "x" + "[x" * 40 + "[0]" + "]" * 40
    src = BotSource("t", f"class Bot:\n    def move(self, turn):\n        x = [0]\n        return {deep}\n", "t.py")
    code = compile_bot(src)
    move = next(
        c for c in next(c for c in code.co_consts if hasattr(c, "co_consts")).co_consts if hasattr(c, "co_code")
    )
    assert len(move.co_code) < 4000  # linear in the nesting, not 2**40


# -- writes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "def f(self, x):\n    x.y = 1\n",
        "def f(self, x):\n    x[0] = 1\n",
        "def f(self, x):\n    class A:\n        x.y = 1\n",
        "def f(self, x):\n    del x.y\n",
    ],
)
def test_writes_to_foreign_objects_are_refused_wherever_they_stand(body: str) -> None:
    class L(list):  # type: ignore[type-arg]  # a foreign subclass of a writable type
        y = 0

    class Foreign:
        y = 0

    bot = load(body)
    for target in (L([0]), Foreign(), Card("ah"), types.SimpleNamespace(y=0)):
        with pytest.raises(TypeError, match="only its own objects"):
            bot.f(target)
    assert L.y == 0 and Foreign.y == 0


def test_writes_to_the_bots_own_objects_and_plain_containers_work() -> None:
    bot = load(
        """
        def f(self):
            self.x = 1
            d = {}
            d['k'] = [0]
            d['k'][0] = d['k'][0] + 2
            o = Own()
            o.z = 3
            Own.w = 4
            return self.x, d, o.z, Own.w
        """,
        header="class Own:\n    pass\n",
    )
    assert bot.f() == (1, {"k": [2]}, 3, 4)


def test_a_write_through_a_consumed_read_is_checked() -> None:
    bot = load("def f(self, h):\n    h.m.x = 1\n")
    with pytest.raises(TypeError):
        bot.f(Holder())
    assert not hasattr(types, "x")


# -- the same behaviour as the guard calls ----------------------------------------------


def test_no_metaclass_keyword_so_type_lookups_run_no_bot_code() -> None:
    # The inlined checks hash types (set lookups); a metaclass of the bot's could make
    # that run its code between a temporary's assignment and its use.
    src = BotSource("t", "class M:\n    pass\n\nclass Bot(metaclass=M):\n    pass\n", "t.py")
    with pytest.raises(BotLoadError, match="metaclass"):
        check_source(src)


@pytest.mark.parametrize(
    "path",
    ["bots/heuristic.py", "bots/greedy.py", "examples/counter.py", "examples/burner.py", "examples/tablesize.py"],
)
def test_inlined_code_plays_exactly_like_the_guard_calls(path: str) -> None:
    src = read_bot_file(str(ROOT / path))
    inlined, calls = compile_bot(src), compile_bot(src, GuardCalls)
    assert "_type_" in names_in(inlined) and "_type_" not in names_in(calls)  # compiled differently...
    records = []
    for code in (inlined, calls):
        players = [InProcessPlayer(instantiate(code, src, s), f"p{s}") for s in range(4)]
        outcome = Referee().play(players, seed=11)
        assert not outcome.faults
        records.append((outcome.moves, outcome.result))
    assert records[0] == records[1]  # ...and plays the same game


def test_every_bot_in_the_repository_compiles_inlined_without_the_fallback() -> None:
    # The fallback (guard calls) is for a tree the compiler would refuse: none of ours.
    import ast

    from RestrictedPython.compile import compile_restricted_exec

    from arena.sandbox.policy.transform import AugmentedAssignment, BotPolicy
    from arena.trust.botsource import parse_source

    files = [*ROOT.glob("bots/*.py"), *ROOT.glob("examples/*.py"), *ROOT.glob("tests/sandbox/python/hostile/**/*.py")]
    compiled = 0
    for path in files:
        try:
            src = read_bot_file(str(path))
            tree = parse_source(src.source, src.label)
        except BotLoadError:
            continue
        tree = ast.fix_missing_locations(AugmentedAssignment().visit(tree))
        result = compile_restricted_exec(tree, filename="<bot>", policy=BotPolicy)  # a SyntaxError fails here
        compiled += result.code is not None
    assert compiled > 50


def test_method_calls_evaluate_receiver_then_arguments_once_and_stay_small() -> None:
    bot = load(
        """
        def f(self, d):
            self.seen = []
            self.note('r', []).append(self.note('a', 1))
            got = self.note('r', d).get(self.note('k', 'a'), self.note('x', 0))
            return self.seen, got

        def note(self, tag, value):
            self.seen.append(tag)
            return value
        """
    )
    assert bot.f(types.MappingProxyType({"a": 5})) == (["r", "a", "r", "k", "x"], 5)
    deep = "x.get(" * 30 + "0" + ")" * 30
    src = BotSource("t", f"class Bot:\n    def move(self, turn):\n        x = {{}}\n        return {deep}\n", "t.py")
    code = compile_bot(src)
    move = next(
        c for c in next(c for c in code.co_consts if hasattr(c, "co_consts")).co_consts if hasattr(c, "co_code")
    )
    assert len(move.co_code) < 6000  # linear in the nesting


def test_a_method_of_a_non_plain_receiver_is_checked_before_the_call() -> None:
    class Sneaky(dict):  # type: ignore[type-arg]  # a dict look-alike: not exactly dict
        def __init__(self) -> None:
            super().__init__()
            self.get = str.format  # unbound str.format, by another name

    bot = load("def f(self, d):\n    return d.get('{0.real}', 1)\n")
    with pytest.raises(AttributeError, match="str.format"):
        bot.f(Sneaky())
    assert bot.f({"{0.real}": 2}) == 2


# -- % formatting reads mapping keys by name ----------------------------------------------


@pytest.mark.parametrize("template", ['"%(_x)s"', 'b"%(_x)s"', '"%(a)s %(_x)d"', '"%%%(_x)s"'])
def test_a_literal_percent_template_with_an_underscore_key_is_refused_while_loading(template: str) -> None:
    src = BotSource("t", f"class Bot:\n    def move(self, turn):\n        return {template} % turn\n", "t.py")
    with pytest.raises(BotLoadError, match="%-format key") as err:
        check_source(src)
    assert err.value.line == 3


@pytest.mark.parametrize(
    "body",
    [
        "def f(self, d, t):\n    return t % d\n",
        "def f(self, d, t):\n    x = t\n    x %= d\n    return x\n",
        "def f(self, d, t):\n    return (lambda: t % d)()\n",
        "def f(self, d, t):\n    return [t % d for i in range(1)]\n",
        "def f(self, d, t):\n    class A:\n        x = t % d\n    return A.x\n",
        "def f(self, d, t):\n    return (t + '') % d\n",
        "def f(self, d, t):\n    return S(t) % d\n",
    ],
)
def test_a_computed_percent_template_cannot_read_underscore_keys_of_a_read_only_mapping(body: str) -> None:
    # The attack: "%(key)s" % mapping reads keys by name, past the subscript guard.
    bot = load(body, header="class S(str):\n    pass\n")
    with pytest.raises(KeyError):
        bot.f(SECRET, "%(_secret)s")
    for calls in (False, True):
        plain = load(body, header="class S(str):\n    pass\n", calls=calls)
        got = plain.f(SECRET, "%(a)s")
        assert got in ("2", ["2"])


def test_a_literal_template_without_underscore_keys_and_escaped_percents_load() -> None:
    bot = load("def f(self, d):\n    return '%%(_x)s %(a)s' % d\n")
    assert bot.f(SECRET) == "%(_x)s 2"


def test_percent_with_numbers_strings_and_tuples_is_unchanged() -> None:
    bot = load("def f(self, n, d):\n    return 7 % n, '%s-%d' % ('a', n), '%(k)s' % d, n % 2, '%s' % d\n")
    assert bot.f(3, {"k": 1}) == (1, "a-3", "1", 1, "{'k': 1}")
