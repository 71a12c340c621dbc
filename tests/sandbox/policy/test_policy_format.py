"""Layer 1 has no format or introspection back door: every road to ``str.format``,
``format_map`` and attribute-walking formatters is closed, whatever the receiver's
type and whatever name the formatter is fetched by; plain formatting still works."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from arena.errors import BotLoadError
from arena.sandbox import check_source
from arena.sandbox.policy.compiler import compile_bot, instantiate
from arena.sandbox.policy.formatting import check_template, is_str_formatter
from arena.trust.botsource import BotSource

HEADER = (
    "import collections\nimport functools\nimport heapq\nimport statistics\nimport itertools\nfrom arena import Card\n"
)


def attack(code: str, extra: str = "") -> Any:
    """Compile a bot whose ``attack(secret)`` evaluates ``code``; return its result (or raise)."""
    src = (
        HEADER + textwrap.dedent(extra) + "\n\nclass Bot:\n    def move(self, turn):\n        pass\n\n"
        "    def attack(self, secret):\n        return " + code + "\n"
    )
    bs = BotSource("t", src, "t.py")
    check_source(bs)
    b = instantiate(compile_bot(bs), bs, 1)
    return b.attack(Secret())


class Secret:
    """Stands for referee state: ``_hidden`` and dunders must stay out of reach."""

    _hidden = "HIDDEN-STATE"
    visible = "ok"


WALK = "{0.__class__.__mro__}"
WALK2 = "{0._hidden}"

ROUTES = [
    # str subclasses: the bound method and through super()
    ("S('" + WALK2 + "').format(secret)", "class S(str):\n    pass\n"),
    ("S('x').walk(secret)", "class S(str):\n    def walk(self, o):\n        return super().format(o)\n"),
    ("S('x').walk(secret)", "class S(str):\n    def walk(self, o):\n        return super(S, self).format(o)\n"),
    ("S('x').walk(secret)", "class S(str):\n    def walk(self, o):\n        return getattr(super(), 'format')(o)\n"),
    # UserString, and a bot class built on it
    ("collections.UserString('" + WALK2 + "').format(secret)", ""),
    ("collections.UserString('{t._hidden}').format_map({'t': secret})", ""),
    ("U('" + WALK2 + "').format(secret)", "class U(collections.UserString):\n    pass\n"),
    # unbound str.format and the ways to fetch or pass it
    ("str.format('" + WALK2 + "', secret)", ""),
    ("str.format_map('{t._hidden}', {'t': secret})", ""),
    ("getattr(str, 'format')('" + WALK2 + "', secret)", ""),
    ("getattr(str, 'format_map', None)('{t._hidden}', {'t': secret})", ""),
    ("list(map(str.format, ['" + WALK2 + "'], [secret]))", ""),
    ("list(itertools.starmap(str.format, [('" + WALK2 + "', secret)]))", ""),
    ("functools.reduce(str.format, [secret], '" + WALK2 + "')", ""),
    ("heapq.nsmallest(1, ['" + WALK2 + "'], key=str.format)", ""),
    ("sorted([secret], key=S('" + WALK2 + "').format)", "class S(str):\n    pass\n"),
    ("Card.format", ""),
    # an alias under another name carries nothing out
    ("A().f('" + WALK2 + "', secret)", "class A:\n    f = str.format\n"),
    ("A().f(secret)", "class A:\n    pass\nA.f = getattr(str, 'format')\n"),
    ("statistics.NormalDist.format", ""),
    # the exact-str road only allows plain fields
    ("'" + WALK + "'.format(secret)", ""),
    ("'" + WALK2 + "'.format(secret)", ""),
    ("'{0[0]}'.format(['x'])", ""),
    ("'{t._hidden}'.format_map({'t': secret})", ""),
    ("'{t[k]}'.format_map({'t': {'k': 1}})", ""),
    ("'{_x}'.format(_x=1)", ""),
    ("'{0:{1.__class__}}'.format(1, secret)", ""),
    ("'{:{}}'.format(1, '{0._hidden}') + '{0.visible}'.format(secret)", ""),
    ("''.join(['{0.', '_hidden}']).format(secret)", ""),
    ("getattr('" + WALK2 + "', 'format')(secret)", ""),
    ("list(map('" + WALK2 + "'.format, [secret]))", ""),
    # the format builtin applies only the spec mini-language
    ("format(secret, '" + WALK2 + "')", ""),
    ("format('x', '{0._hidden}')", ""),
]


@pytest.mark.parametrize("code, extra", ROUTES)
def test_every_route_to_an_attribute_walk_is_refused(code: str, extra: str) -> None:
    try:
        result = attack(code, extra)
    except BotLoadError as exc:  # refused while loading: as good
        assert "HIDDEN" not in exc.message
        return
    except (AttributeError, ValueError, TypeError, NameError) as exc:
        assert "HIDDEN" not in str(exc)
        return
    raise AssertionError(f"{code!r} ran and gave {result!r}")


@pytest.mark.parametrize(
    "code, expected",
    [
        ("'{} {}'.format(1, 'a')", "1 a"),
        ("'{0:>3}|{1!r}|{x:.2f}'.format(7, 'q', x=1.5)", "  7|'q'|1.50"),
        ("'{n:{w}}'.format(n=5, w=3)", "  5"),
        ("'{a}-{b}'.format_map({'a': 1, 'b': 2})", "1-2"),
        ("'{{literal}} {}'.format(3)", "{literal} 3"),
        ("list(map('<{}>'.format, [1, 2]))", ["<1>", "<2>"]),
        ("f'{secret.visible:>4}'", "  ok"),
        ("format(3.14159, '.2f') + format('x', '>3')", "3.14  x"),
        ("S('x').format()", "own"),
        ("'%s-%(a)s' % {'a': 1} if False else '%s' % 'p'", "p"),
    ],
)
def test_honest_formatting_still_works(code: str, expected: Any) -> None:
    extra = "class S(str):\n    def format(self):\n        return 'own'\n"
    assert attack(code, extra) == expected


def test_is_str_formatter_sees_every_form() -> None:
    class S(str):
        pass

    for value in (str.format, str.format_map, "x".format, S("x").format, super(S, S("x")).format):
        assert is_str_formatter(value), value
    for value in (str.join, "x".upper, list.append, print, len, format):
        assert not is_str_formatter(value), value


def test_templates_are_checked_through_nested_specs() -> None:
    check_template("{0:{1}} {x!r:>{w}}")
    for bad in ("{0.a}", "{0[1]}", "{0:{1.a}}", "{x:{y[0]}}", "{_p}"):
        with pytest.raises(ValueError):
            check_template(bad)
