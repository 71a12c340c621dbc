"""Layer 1 decides at load time what the source text decides (arena/sandbox/policy/transform.py
``Unguard``), and keeps at run time what depends on live objects. For each check moved to
load time: the refusal now happens while loading, and the attack that would beat a
load-time-only check (the same thing computed at run time) is still refused at run time."""

from __future__ import annotations

import math
import textwrap
import types
from typing import Any

import pytest

from arena.errors import BotLoadError
from arena.sandbox import check_source
from arena.sandbox.policy.compiler import compile_bot, instantiate
from arena.sandbox.policy.guards import attr_guard, full_getattr
from arena.sandbox.policy.transform import GuardCalls
from arena.trust.botsource import BotSource


def source(body: str, header: str = "") -> BotSource:
    code = (
        textwrap.dedent(header)
        + "\n\nclass Bot:\n    def move(self, turn):\n        pass\n\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
    )
    return BotSource("t", code, "t.py")


def load(body: str, header: str = "") -> Any:
    src = source(body, header)
    check_source(src)
    return instantiate(compile_bot(src), src, 1)


def names_in(code: types.CodeType) -> set[str]:
    """Every global name the compiled module (and its nested functions) refers to."""
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= names_in(const)
    return found


# -- load-time refusals -----------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    ["{0.__class__}", "{0.visible}", "{0[0]}", "{t._hidden}", "{_x}", "{0:{1.real}}", "{:{0[1]}}"],
)
@pytest.mark.parametrize("method", ["format", "format_map"])
def test_a_walking_literal_template_is_refused_while_loading(template: str, method: str) -> None:
    # In a method never called: the refusal is the loader's, with the line, before any game.
    src = source(f"def never(self, x):\n    return {template!r}.{method}(x)\n")
    with pytest.raises(BotLoadError) as err:
        check_source(src)
    assert err.value.line == 8
    assert "format field" in err.value.message or "not available" in err.value.message


def test_a_template_built_at_run_time_is_still_refused_at_run_time() -> None:
    # The attack on a load-time-only check: the same template, not a literal.
    bot = load("def walk(self, x):\n    return ('{0.' + 'real}').format(x)\n")
    with pytest.raises(ValueError, match="plain fields"):
        bot.walk(1)
    bot = load("def walk(self, t, x):\n    return t.format_map(x)\n")
    with pytest.raises(ValueError, match="plain fields"):
        bot.walk("{k.real}", {"k": 1})


def test_plain_literal_templates_still_format() -> None:
    bot = load("def show(self):\n    return '{} {:>3} {x!r}'.format(1, 2, x='a') + '{k}'.format_map({'k': 4})\n")
    assert bot.show() == "1   2 'a'4"


# -- what stays at run time -------------------------------------------------------------


def test_constant_subscripts_are_plain_but_underscore_keys_keep_the_guard() -> None:
    code = compile_bot(source("def get(self, d, k):\n    return d['a'], d[-1:], d[0], d[k], d['_x']\n"))
    src = source("def get(self, d, k):\n    return d['_x']\n")
    key_guards = {"_getitem_", "_keyguard_"}  # the call, or its inlined form (arena/sandbox/policy/inline.py)
    assert key_guards & names_in(compile_bot(src))  # a "_" literal key keeps the guard
    assert key_guards & names_in(code)  # the computed key keeps it too
    assert key_guards & names_in(compile_bot(src, GuardCalls)) == {"_getitem_"}
    bot = load("def get(self, d, k):\n    return d[k]\n")
    with pytest.raises(KeyError):
        bot.get(types.MappingProxyType({"_secret": 1}), "_secret")
    bot = load("def get(self, d):\n    return d['_secret']\n")
    with pytest.raises(KeyError):
        bot.get(types.MappingProxyType({"_secret": 1}))
    bot = load("def get(self, d, s):\n    return d['a'], s[0:1], s[-1], s[0]\n")
    assert bot.get({"a": 1}, [10, 20, 30]) == (1, [10], 30, 10)


def test_guards_that_check_nothing_are_gone_from_the_compiled_code() -> None:
    body = """
    def work(self, pairs, n):
        total = 0
        for a, b in pairs:
            total += a * b
        x, y = pairs[0]
        seen = [a for a, b in pairs] + sorted(*[[3, 1, 2]])
        n -= 1
        return total, x, y, seen, n
    """
    code = compile_bot(source(body))
    left = names_in(code) & {"_getiter_", "_iter_unpack_sequence_", "_unpack_sequence_", "_inplacevar_", "_apply_"}
    assert not left
    assert load(body).work([(1, 2), (3, 4)], 5) == (14, 1, 2, [1, 3, 1, 2, 3], 4)


def test_plain_attribute_reads_still_check_the_value() -> None:
    own = {id(math)}
    plain, full = attr_guard(own), full_getattr(own)
    holder = types.SimpleNamespace(m=types, ok=math, f="x{0.real}".format, g="x".upper)
    for guard in (plain, full):
        with pytest.raises(AttributeError, match="module"):
            guard(holder, "m")  # a module the bot did not import
        with pytest.raises(AttributeError, match="str.format"):
            guard(holder, "f")  # str.format under another name
        assert guard(holder, "ok") is math
        assert guard(holder, "g")() == "X"
    with pytest.raises(AttributeError):
        full(holder, "__class__")  # a computed name: the name is checked too
    with pytest.raises(AttributeError):
        full(holder, "f_back")


def test_format_and_mro_reads_keep_the_full_guard() -> None:
    code = compile_bot(source("def f(self, s, t):\n    return s.format, t.mro, s.upper\n"))
    assert {"_getattr_", "_vet_"} <= names_in(code)  # s.upper: the value check, inlined
    assert {"_getattr_", "_attr_"} <= names_in(
        compile_bot(source("def f(self, s, t):\n    return s.format, t.mro, s.upper\n"), GuardCalls)
    )
    bot = load("def f(self, t):\n    return t.mro\n")
    with pytest.raises(AttributeError, match="mro"):
        bot.f(int)
    bot = load("def f(self, s):\n    return s.format\n", header="")
    with pytest.raises(AttributeError):
        bot.f(type("S", (str,), {})("{0.real}"))
