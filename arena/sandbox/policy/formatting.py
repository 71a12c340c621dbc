"""The one safe road to ``str.format`` for bots (part of layer 1, the code policy).

``str.format`` and ``str.format_map`` read attributes and items *by name
inside the template* (``"{0.__class__.__mro__}"``, ``"{0[_secret]}"``), past
every guard the compiled code calls. So, whatever the receiver's type:

* on an exact ``str`` the bot gets :func:`safe_format` bound to it: the
  template may hold only plain fields (``{}``, ``{0}``, ``{name}``, with
  conversions and specs, nested specs too), never ``.attr`` or ``[key]``;
* on anything else (``str`` subclasses, ``super()`` objects, the ``str`` type
  itself as ``str.format``, ``collections.UserString``...) the names
  ``format``/``format_map`` resolve only to a function the bot's own code
  defined; otherwise they are refused;
* and whatever the *name*, a value that is ``str.format``/``format_map``
  (bound or unbound) is refused (:func:`is_str_formatter`), so no alias can
  carry it out.

f-strings are compiled, not formatted at run time, and their expressions pass
the policy like any other code; ``format(value, spec)`` applies only the
format-spec mini-language, which names no attributes.

``%`` formatting reads no attributes, but ``"%(key)s" % mapping`` reads *keys by
name*, past the guard that refuses ``_`` keys of read-only mappings. So a literal
template's keys are checked at load time (:func:`percent_keys`: a ``_`` key is a
load error), and a template computed at run time gets, in place of a read-only
mapping, the same mapping without its ``_`` keys (:func:`percent_operand`).
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]  # CPython's template parser, the one str.format uses
import types
from collections.abc import Callable
from functools import lru_cache
from typing import Any

__all__ = [
    "FORMAT_NAMES",
    "check_percent_template",
    "check_template",
    "format_attribute",
    "is_str_formatter",
    "percent_keys",
    "percent_operand",
    "safe_format",
]

#: Attribute names that reach the format machinery.
FORMAT_NAMES = frozenset({"format", "format_map"})

_BUILTIN_KINDS = (
    types.BuiltinMethodType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
)

_REFUSED = '"{name}" is available to bots only on a plain str, with plain fields (f-strings work everywhere)'


@lru_cache(maxsize=512)
def check_template(template: str, _depth: int = 0) -> None:
    """Refuse a format template whose fields walk attributes or items.

    :raises ValueError: a field like ``{0.x}``, ``{0[1]}``, a ``_`` keyword, or a bad template.
    """
    for _literal, field, spec, _conversion in _string.formatter_parser(template):
        if field is None:
            continue
        first, rest = _string.formatter_field_name_split(field)
        for _ in rest:
            raise ValueError(
                f"format field {field!r}: bots may use only plain fields like {{0}} or {{name}}, "
                "not .attribute or [index] (use an f-string)"
            )
        if isinstance(first, str) and first.startswith("_"):
            raise ValueError(f'format field {field!r}: names starting with "_" are not available to bots')
        if spec and "{" in spec:
            if _depth >= 2:
                raise ValueError("Max string recursion exceeded")
            check_template(spec, _depth + 1)


def safe_format(template: str, name: str) -> Callable[..., str]:
    """``template.format`` / ``template.format_map`` for an exact ``str``, plain fields only."""
    if name == "format":

        def format(*args: Any, **kwargs: Any) -> str:  # noqa: A001 - it is str.format, checked
            check_template(template)
            return template.format(*args, **kwargs)

        return format

    def format_map(mapping: Any) -> str:
        check_template(template)
        return template.format_map(mapping)

    return format_map


def _bot_function(value: Any) -> bool:
    """Whether ``value`` is a function (or a method of one) compiled from the bot's source."""
    func = value.__func__ if isinstance(value, types.MethodType) else value
    return isinstance(func, types.FunctionType) and func.__code__.co_filename == "<bot>"


def is_str_formatter(value: Any) -> bool:
    """Whether ``value`` is ``str.format``/``format_map`` itself, bound to any str or unbound."""
    if not isinstance(value, _BUILTIN_KINDS):
        return False
    if getattr(value, "__name__", None) not in FORMAT_NAMES:
        return False
    owner = getattr(value, "__objclass__", None)
    if owner is None:
        owner = getattr(value, "__self__", None)
        owner = owner if isinstance(owner, type) else type(owner)
    return isinstance(owner, type) and issubclass(owner, str)


def format_attribute(ob: Any, name: str, real_getattr: Callable[..., Any] = getattr) -> Any:
    """What ``ob.format`` / ``ob.format_map`` gives a bot (``name`` in :data:`FORMAT_NAMES`).

    :raises AttributeError: anything but an exact ``str`` or the bot's own function.
    """
    if type(ob) is str:
        return safe_format(ob, name)
    value = real_getattr(ob, name)
    if _bot_function(value):
        return value
    raise AttributeError(_REFUSED.format(name=name))


def percent_keys(template: str | bytes) -> list[str | bytes]:
    """The ``%(key)`` mapping keys a ``%`` template reads (``%%`` is a literal percent sign;
    a key may hold balanced parentheses, as in CPython)."""
    text = template
    pct, lp, rp = ("%", "(", ")") if isinstance(text, str) else (b"%", b"(", b")")
    keys: list[str | bytes] = []
    i, n = 0, len(text)
    while i < n:
        if text[i : i + 1] != pct:
            i += 1
            continue
        if text[i + 1 : i + 2] == pct:
            i += 2
            continue
        if text[i + 1 : i + 2] == lp:
            depth, j = 1, i + 2
            while j < n and depth:
                c = text[j : j + 1]
                depth += (c == lp) - (c == rp)
                j += 1
            keys.append(text[i + 2 : j - 1])
            i = j
            continue
        i += 1
    return keys


def _underscore(key: Any) -> bool:
    return isinstance(key, str) and str.startswith(key, "_") or isinstance(key, bytes) and key[:1] == b"_"


def check_percent_template(template: str | bytes) -> bool:
    """Whether a literal ``%`` template reads mapping keys at all.

    :raises ValueError: it reads a ``_`` key.
    """
    keys = percent_keys(template)
    for key in keys:
        if _underscore(key):
            raise ValueError(f'%-format key {key!r}: names starting with "_" are not available to bots')
    return bool(keys)


def percent_operand(value: Any) -> Any:
    """``_pm_``, the right operand of a bot's ``%`` (template computed at run time): a
    read-only mapping is replaced by the same mapping without its ``_`` keys."""
    if type(value) is types.MappingProxyType:
        return types.MappingProxyType({k: v for k, v in value.items() if not _underscore(k)})
    return value
