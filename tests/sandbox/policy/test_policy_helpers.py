"""Layer 1: every helper a bot can reach, walked and classified (issue 17, class A).

A bot may write only to its own objects and plain containers (the ``_write_`` rule), and
no helper may do for it what it may not do itself. :func:`reachable` walks every public
callable a bot reaches from its builtins, its imports and what it is given (the turn, its
players, rules, events), metaclass methods included; each must be filed below:

* :data:`PURE` (a): sets no attribute and calls no bot code (a bot's comparison dunders
  called by comparing its own objects aside);
* :data:`ACTING` (b): writes only into the object it is bound to or makes, or into a
  container the bot passes, or calls a callable the bot passes with values the bot
  passed or the helper made: nothing a bot could not do with its own code;
* :data:`GUARDED` (c): could write into objects that are not the bot's (``Card``) or
  read their ``__dict__``: the namespace gives a guarded version;
* :data:`REFUSED` (c): the policy refuses the name on the objects where it writes.

A helper that appears with a new Python (or a new allowed import) and is filed nowhere
fails :func:`test_every_reachable_helper_is_classified`; a Python helper filed as pure
whose bytecode writes attributes or reads frames fails the next test. The attacks on
class (c) are also hostile bots (``tests/sandbox/python/hostile/functools_*.py``, ``abc_register.py``,
``class_body_set_name.py``).
"""

from __future__ import annotations

import abc
import collections.abc
import dis
import random
import textwrap
import types
from typing import Any

import pytest

from arena.botapi.turn import PlayerInfo, Turn
from arena.game.cards import Card
from arena.game.rules import Rules
from arena.sandbox import check_source
from arena.sandbox.policy.compiler import compile_bot, instantiate
from arena.sandbox.policy.namespace import BotNamespace
from arena.trust.botsource import BotSource

#: What a bot is handed besides its builtins and imports: the turn and what it holds.
GIVEN: tuple[type, ...] = (Turn, PlayerInfo, Rules, types.MappingProxyType)


def _made() -> tuple[type, ...]:
    """Types of what helpers hand back that no module names (caches, dict views, generators,
    tee objects): a bot holds instances, never the type (no ``type``, no ``__class__``), so
    only their methods are reachable. (A namedtuple's are ``tuple``'s and ``_`` names.)"""
    import functools
    import itertools

    d: dict[str, int] = {}
    made = [functools.lru_cache(None)(len), d.keys(), d.values(), d.items(), (x for x in ()), itertools.tee(())[0]]
    from arena.botapi.forward import World  # what sample_world hands back (its type is never given)

    return (*(type(x) for x in made), World)


MADE = _made()


def canonical(ob: Any) -> str:
    """``module.qualname`` of a callable (its function's, for a bound method)."""
    fn = ob.__func__ if type(ob) is types.MethodType else ob
    qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "?")
    module = getattr(fn, "__module__", None)
    if module is None:
        owner = getattr(fn, "__objclass__", None) or getattr(fn, "__self__", None)
        module = (owner if isinstance(owner, type) else type(owner)).__module__
    return f"{module}.{qual}"


def _names(ob: Any) -> set[str]:
    names = set(dir(ob))
    if isinstance(ob, type) and type(ob) is not type:
        names |= set(dir(type(ob)))  # the metaclass's methods, bound to the class (ABCMeta.register)
    return {n for n in names if not n.startswith("_")}


def reachable(space: BotNamespace | None = None) -> dict[str, Any]:
    """Every public callable a bot reaches from its builtins, its imports and what it is given,
    through public attributes of modules, classes (their metaclass's too) and its ``random``."""
    space = space or BotNamespace(1)
    roots = [v for k, v in sorted(space.builtins.items()) if not k.startswith("_")]
    roots += [v for _, v in sorted(space.modules.items())] + list(GIVEN) + list(MADE)
    found: dict[str, Any] = {}
    seen: dict[int, Any] = {}  # holds what it saw: a freed bound method's id could come back
    todo = list(roots)
    while todo:
        ob = todo.pop()
        if id(ob) in seen:
            continue
        seen[id(ob)] = ob
        if callable(ob):
            found.setdefault(canonical(ob), ob)
        if isinstance(ob, (types.ModuleType, type)) or ob is space.modules["random"]:
            for name in sorted(_names(ob)):
                try:
                    value = getattr(ob, name)
                except AttributeError:
                    continue
                if callable(value) or isinstance(value, types.ModuleType):
                    todo.append(value)
    for t in MADE:
        found.pop(canonical(t), None)
    return found


#: Names in Python code that mark an attribute write, a frame or a namespace read.
WATCHED = frozenset(
    {
        "setattr",
        "delattr",
        "update_wrapper",
        "exec",
        "eval",
        "globals",
        "vars",
        "__dict__",
        "_getframe",
        "f_globals",
        "f_back",
        "f_locals",
        "_abc_register",
    }
)


def flags(ob: Any) -> set[str]:
    """What a Python helper's bytecode does that may act on other objects: attribute writes
    (``STORE_ATTR``/``DELETE_ATTR``) and the :data:`WATCHED` names (nested code included)."""
    fn = ob.__func__ if type(ob) is types.MethodType else ob
    code = getattr(fn, "__code__", None)
    out: set[str] = set()
    todo = [code] if code is not None else []
    while todo:
        c = todo.pop()
        for ins in dis.get_instructions(c):
            if ins.opname in ("STORE_ATTR", "DELETE_ATTR"):
                out.add(ins.opname)
            elif ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD") and ins.argval in WATCHED:
                out.add(str(ins.argval))
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


#: (a) Reviewed: no attribute write, no call of bot code. By owner (module or class).
PURE = {
    "_operator": "mul",
    "_random.Random": "getrandbits random",
    "arena.botapi.imports.BotRandom": "getrandbits random",
    "arena.game.cards": "Card",
    "arena.game.cards.Card": "parse",
    "arena.errors": "IllegalMove",
    "arena.game.rules": "Rules",
    "arena.game.rules.Rules": "card_points changed check_players from_dict replace to_dict",
    "arena.botapi.turn": "PlayerInfo Turn",
    "arena.botapi.turn.Turn": "can_put draw finish points put",
    "builtins": (
        "ArithmeticError AssertionError AttributeError BaseException BufferError BytesWarning "
        "DeprecationWarning EOFError Exception FloatingPointError FutureWarning GeneratorExit ImportError "
        "ImportWarning IndentationError IndexError KeyError KeyboardInterrupt LookupError MemoryError "
        "NameError NotImplementedError OSError OverflowError PendingDeprecationWarning ReferenceError "
        "RuntimeError RuntimeWarning StopIteration SyntaxError SyntaxWarning SystemError SystemExit "
        "TabError TypeError UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError "
        "UnicodeTranslateError UnicodeWarning UserWarning ValueError Warning ZeroDivisionError abs all "
        "any ascii bin bool callable chr complex dict divmod enumerate float format frozenset hash hex "
        "int isinstance issubclass len list mappingproxy next object oct ord pow range repr round set "
        "slice str sum super tuple zip"
    ),
    "builtins.bool": "from_bytes",
    "builtins.complex": "conjugate",
    "builtins.dict": "copy fromkeys get items keys values",
    "builtins.float": "as_integer_ratio conjugate fromhex hex is_integer",
    "builtins.frozenset": "copy difference intersection isdisjoint issubset issuperset symmetric_difference union",
    "builtins.int": "as_integer_ratio bit_count bit_length conjugate from_bytes to_bytes",
    "builtins.list": "copy count index",
    "builtins.mappingproxy": "copy get items keys values",
    "builtins.range": "count index",
    "builtins.set": "copy difference intersection isdisjoint issubset issuperset symmetric_difference union",
    "builtins.slice": "indices",
    "builtins.str": (
        "capitalize casefold center count encode endswith expandtabs find format format_map index isalnum "
        "isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle "
        "isupper join ljust lower lstrip maketrans partition removeprefix removesuffix replace rfind "
        "rindex rjust rpartition rsplit rstrip split splitlines startswith strip swapcase title translate "
        "upper zfill"
    ),
    "builtins.tuple": "count index",
    "collections": "ChainMap Counter OrderedDict UserDict UserList UserString deque",
    "collections.ChainMap": "copy fromkeys get new_child",
    "collections.Counter": "copy elements fromkeys most_common total",
    "collections.OrderedDict": "copy fromkeys items keys values",
    "collections.UserDict": "fromkeys",
    "collections.UserList": "copy count index",
    "collections.UserString": (
        "capitalize casefold center count encode endswith expandtabs find format format_map index isalnum "
        "isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle "
        "isupper join ljust lower lstrip partition removeprefix removesuffix replace rfind rindex "
        "rjust rpartition rsplit rstrip split splitlines startswith strip swapcase title translate upper "
        "zfill"
    ),
    "collections.abc.Mapping": "get items keys values",
    "collections.defaultdict": "copy fromkeys",
    "collections.deque": "copy count index",
    "decimal": "Decimal",
    "decimal.Decimal": (
        "adjusted as_integer_ratio as_tuple canonical compare compare_signal compare_total "
        "compare_total_mag conjugate copy_abs copy_negate copy_sign exp fma from_float is_canonical "
        "is_finite is_infinite is_nan is_normal is_qnan is_signed is_snan is_subnormal is_zero ln log10 "
        "logb logical_and logical_invert logical_or logical_xor max max_mag min min_mag next_minus "
        "next_plus next_toward normalize number_class quantize radix remainder_near rotate same_quantum "
        "scaleb shift sqrt to_eng_string to_integral to_integral_exact to_integral_value"
    ),
    "fractions": "Fraction",
    "fractions.Fraction": "as_integer_ratio from_decimal from_float limit_denominator",
    "itertools": (
        "chain combinations combinations_with_replacement compress count cycle islice pairwise "
        "permutations product repeat tee zip_longest"
    ),
    "itertools.chain": "from_iterable",
    "math": (
        "acos acosh asin asinh atan atan2 atanh cbrt ceil comb copysign cos cosh degrees dist erf erfc "
        "exp exp2 expm1 fabs factorial floor fmod frexp fsum gamma gcd hypot isclose isfinite isinf isnan "
        "isqrt lcm ldexp lgamma log log10 log1p log2 modf nextafter perm pow prod radians remainder sin "
        "sinh sqrt tan tanh trunc ulp"
    ),
    "numbers.Real": "conjugate",
    "random": "Random",
    "random.Random": (
        "betavariate choice choices expovariate gammavariate getstate lognormvariate normalvariate "
        "paretovariate randbytes randint randrange sample triangular uniform vonmisesvariate "
        "weibullvariate"
    ),
    "statistics": (
        "LinearRegression NormalDist StatisticsError correlation covariance fmean geometric_mean "
        "harmonic_mean linear_regression mean median median_grouped median_high median_low mode multimode "
        "pstdev pvariance quantiles stdev variance"
    ),
    "statistics.NormalDist": "cdf from_samples inv_cdf overlap pdf quantiles samples zscore",
}
#: (b) Reviewed: writes only into its own object, a new one or a container the bot passes; or
#: calls a callable the bot passes with what the bot passed. A bot holds only its own
#: containers (everything it is given is a copy or read-only: tests/sandbox/python/hostile/mutate_given.py).
ACTING: dict[str, str] = {
    # the container or exception they are bound to (unbound, ``list.append(x, v)`` is ``x.append(v)``)
    "builtins.dict": "clear pop popitem setdefault update",
    "builtins.list": "append clear extend insert pop remove reverse sort",
    "builtins.set": "add clear difference_update discard intersection_update pop remove "
    "symmetric_difference_update update",
    "builtins.BaseException": "add_note with_traceback",
    "collections.ChainMap": "clear pop popitem",
    "collections.Counter": "subtract update",
    "collections.OrderedDict": "clear move_to_end pop popitem setdefault update",
    "collections.UserList": "append clear extend insert pop remove reverse sort",
    "collections.abc.MutableMapping": "clear pop popitem setdefault update",
    "collections.deque": "append appendleft clear extend extendleft insert pop popleft remove reverse rotate",
    # UserDict.copy sets and restores ``self.data`` (a User* container's own); Random.seed/
    # setstate/gauss write ``gauss_next`` of a Random (only the bot's own exist in its process)
    "collections.UserDict": "copy",
    "random.Random": "gauss seed setstate shuffle",
    # items of the list or sequence passed (``key=`` called with its items)
    "_bisect": "bisect_left bisect_right insort_left insort_right",
    "_heapq": "heapify heappop heappush heappushpop heapreplace",
    # call what the bot passes, with its items; property/classmethod/staticmethod wrap it
    "_functools": "cmp_to_key reduce",
    "builtins": "classmethod filter iter map max min property sorted staticmethod",
    "builtins.property": "deleter getter setter",
    "heapq": "merge nlargest nsmallest",
    "itertools": "accumulate dropwhile filterfalse groupby starmap takewhile",
    # a new class: its ``__module__`` (``module=``, else the caller's ``__name__``: the bot's own)
    "collections": "defaultdict namedtuple",
    # the turn's own say counter (the arena's API)
    "arena.botapi.turn.Turn": "say",
    # the forward model: a new World, one number drawn from the random the bot passes
    "arena.botapi.forward": "sample_world sampler",
    "arena.botapi.forward.sampler.<locals>": "sample",
}

#: The same for the methods of what helpers hand back (:data:`MADE`).
PURE_MADE: dict[str, str] = {
    "builtins.dict_items": "isdisjoint",
    "builtins.dict_keys": "isdisjoint",
    "functools._lru_cache_wrapper": "cache_info",
    "arena.botapi.forward.World": (
        "actions can_draw can_finish cards clone hand places points puttable scores stock_cards"
    ),
}
ACTING_MADE: dict[str, str] = {
    # resume a generator (the bot's own code) with what the bot passes; empty its own cache
    "builtins.generator": "close send throw",
    "functools._lru_cache_wrapper": "cache_clear",
    # a sampled world's own state (never the real game's; turn keeps its feed); play_move/playout call the policy the
    # bot passes with a turn of that world
    "arena.botapi.forward.World": "apply deal draw finish play_move playout put turn",
}

#: (c) Given guarded: the namespace's version takes only the bot's own functions and classes
#: (``functools.total_ordering(Card)`` wrote ``__gt__``/``__le__``/``__ge__`` into ``Card``;
#: ``lru_cache(Card)`` copied ``Card.__dict__``'s raw descriptors into the wrapper), or checks
#: the name and the object (``setattr``/``delattr``/``getattr``/``hasattr``, ``reversed``).
GUARDED = {
    "functools.total_ordering",
    "functools.lru_cache",
    "functools.cache",
    "arena.sandbox.policy.guards.full_getattr.<locals>.guarded_getattr",
    "arena.sandbox.policy.namespace.BotNamespace._builtins.<locals>.g_hasattr",
    "arena.sandbox.policy.namespace.BotNamespace._builtins.<locals>.g_setattr",
    "arena.sandbox.policy.namespace.BotNamespace._builtins.<locals>.g_delattr",
    "arena.sandbox.policy.namespace.BotNamespace._builtins.<locals>.g_reversed",
}

#: (c) Refused by name: ``ABCMeta.register`` (``collections.UserDict.register(Card)`` wrote
#: into the registry of a shared class, and made ``isinstance(card, Mapping)`` true).
REFUSED = (
    {"abc.ABCMeta.register"}
    | {
        # ``type.mro`` of a class with a metaclass (refused on every class: arena/sandbox/policy/guards.py)
        f"{owner}.mro"
        for owner in ("collections.ChainMap", "collections.UserDict", "collections.UserList", "collections.UserString")
    }
    | {"fractions.Fraction.mro"}
)


def _filed(table: dict[str, str]) -> set[str]:
    return {f"{owner}.{name}" for owner, names in table.items() for name in names.split()}


def test_every_reachable_helper_is_classified() -> None:
    found = reachable()
    assert len(found) > 400  # the walk reached the modules, classes and methods
    unfiled = set(found) - _filed(PURE) - _filed(ACTING) - _filed(PURE_MADE) - _filed(ACTING_MADE) - GUARDED - REFUSED
    assert not unfiled, f"classify these helpers (see the module docstring): {sorted(unfiled)}"
    assert not _filed(PURE) & (_filed(ACTING) | GUARDED | REFUSED)


def test_a_python_helper_filed_as_pure_writes_no_attribute_and_reads_no_frame() -> None:
    found = reachable()
    flagged = {k: flags(found[k]) for k in (_filed(PURE) | _filed(PURE_MADE)) & set(found)}
    assert {k: v for k, v in flagged.items() if v} == {}
    # the scan sees what it looks for: the helpers filed as acting that write attributes
    assert {"STORE_ATTR", "_getframe"} <= flags(found["collections.namedtuple"])
    assert "_abc_register" in flags(found["abc.ABCMeta.register"])


# -- class (c): the attacks, in-process (the hostile bots run them sandboxed) -----------------


def load(body: str) -> Any:
    code = textwrap.dedent(HEADER) + "\n\nclass Bot:\n    def move(self, turn):\n        pass\n\n"
    src = BotSource("t", code + textwrap.indent(textwrap.dedent(body), "    "), "t.py")
    check_source(src)
    return instantiate(compile_bot(src), src, 1)


HEADER = """
import collections, functools, statistics, random
from functools import lru_cache, cache, total_ordering
from arena import Card
"""


def _foreign_classes() -> list[type]:
    return sorted({v for v in reachable().values() if isinstance(v, type)}, key=lambda t: t.__qualname__)


def _foreign_functions() -> list[Any]:
    found = reachable()
    return [found[k] for k in sorted(found) if not isinstance(found[k], type)]


def test_total_ordering_takes_no_class_but_the_bots_own() -> None:
    bot = load("def order(self, cls):\n    return functools.total_ordering(cls)\n")
    before = {cls: dict(vars(cls)) for cls in _foreign_classes()}
    refused = 0
    for cls in before:
        with pytest.raises(TypeError, match="own functions and classes"):
            bot.order(cls)
        refused += 1
    assert refused > 50 and all(dict(vars(cls)) == d for cls, d in before.items())
    assert "__gt__" not in vars(Card)


def test_lru_cache_and_cache_take_no_function_or_class_but_the_bots_own() -> None:
    bot = load(
        """
        def wrap(self, f):
            for make in (lru_cache, cache, lru_cache(maxsize=4), lru_cache(None, True), functools.lru_cache):
                try:
                    make(f)
                except TypeError:
                    continue
                return make
        """
    )
    for ob in _foreign_classes() + _foreign_functions():
        assert bot.wrap(ob) is None, ob


def test_the_bots_own_classes_and_functions_keep_the_functools_helpers() -> None:
    bot = load(
        """
        def run(self):
            @total_ordering
            class P:
                def __init__(self, v):
                    self.v = v
                def __lt__(self, o):
                    return self.v < o.v
                def __eq__(self, o):
                    return self.v == o.v
                @property
                def double(self):
                    return self.v * 2

            @lru_cache
            def fib(n):
                return n if n < 2 else fib(n - 1) + fib(n - 2)

            @lru_cache(maxsize=None)
            def g(n):
                return n * 2

            h = cache(lambda x: x + 1)
            again = lru_cache(maxsize=2)(self.run2)
            return P(1) <= P(2), P(3) >= P(2), P(4).double, fib(40), g(4), h(1), again(3), fib.cache_info().hits > 0

        @cache
        def run2(self, n):
            return n * 3
        """
    )
    assert bot.run() == (True, True, 8, 102334155, 8, 2, 9, True)


@pytest.mark.parametrize("how", ["cls.register(Card)", "getattr(cls, 'register')(Card)", "Own.register(Card)"])
def test_abc_register_is_refused_on_every_reachable_abstract_class(how: str) -> None:
    bot = load(f"def reg(self, cls):\n    class Own(cls):\n        pass\n    {how}\n")
    abcs = [cls for cls in _foreign_classes() if isinstance(cls, abc.ABCMeta)]
    assert len(abcs) >= 4
    for cls in abcs:
        with pytest.raises(AttributeError, match="register"):
            bot.reg(cls)
        assert not issubclass(Card, cls)
    assert not isinstance(Card("6s"), collections.abc.Mapping)


def test_a_class_body_cannot_rename_a_property_of_another_class() -> None:
    bot = load("def make(self, value):\n    class B:\n        forged = value\n    return B\n")
    for ob in (Card.symbol, Turn.hand, property(Card.symbol.fget)):
        with pytest.raises(TypeError, match="did not make"):
            bot.make(ob)
    with pytest.raises(AttributeError, match="'symbol'"):
        Card.symbol.__set__(types.SimpleNamespace(), 1)  # its error messages still name it rightly
    assert bot.make(5).forged == 5


def test_class_creation_hooks_of_reachable_types_are_accounted_for() -> None:
    """``type()`` calls ``__set_name__`` of each class-body value and ``__init_subclass__`` of the
    bases: the only reachable types with either are ``property`` (checked by the bot's metaclass)
    and ``random.Random`` (its hook writes into the bot's subclass: its own)."""
    types_ = [v for v in reachable().values() if isinstance(v, type)]
    set_name = {t for t in types_ if hasattr(t, "__set_name__")}
    init_subclass = {t for t in types_ if any("__init_subclass__" in vars(b) for b in t.__mro__ if b is not object)}
    assert set_name == {property}
    assert init_subclass == {random.Random}
