"""Layer 1, run time: the guards bot code calls for what the source text cannot decide.

Load time (:mod:`.transform`) has already refused every ``_`` name and
frame/code attribute written in the source and taken back the guard calls
whose answer the source decides. What reaches these functions depends on live
objects:

``attr_guard`` (``_attr_``, a plain ``a.name`` read)
    the *value*: a module the bot did not import (``statistics.sys`` would be
    the real ``sys``) and ``str.format``/``format_map`` under another name are
    refused. One type lookup for the common case.
``full_getattr`` (``_getattr_`` for the names of :data:`.transform.CLOSER_LOOK`, and the ``getattr`` builtin)
    also the *name* (a computed name may be anything), ``format``/``format_map``
    through :mod:`.formatting`, ``type.mro``, ``AttributeError.obj``,
    ``string.Formatter`` methods.
``write_guard`` (``_write_``)
    the object's type: only plain containers and the bot's own classes and
    their instances may be changed.
``getitem_guard`` (``_getitem_``, a computed index)
    a ``_`` key on a read-only mapping (history events, rules) is refused.
"""

from __future__ import annotations

import collections
import types
from collections.abc import Callable, Collection
from typing import Any

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from .formatting import FORMAT_NAMES, format_attribute, is_str_formatter

__all__ = [
    "WRITABLE_TYPES",
    "attr_guard",
    "full_getattr",
    "getitem_guard",
    "write_guard",
    "super_init",
]

ModuleType = types.ModuleType

#: Frame, generator, traceback and code attributes (refused at load time too, when written in the source).
FORBIDDEN_ATTRS = frozenset(INSPECT_ATTRIBUTES)

#: Attribute names that need a closer look whatever the object (see :func:`_special`).
_SPECIAL = frozenset({"mro", "obj", "Formatter", "get_field", "get_value", "vformat"})
#: Types a ``str.format`` value can have (bound or unbound): values of these types are looked at closer.
_BUILTIN_KINDS = frozenset(
    {
        types.BuiltinMethodType,
        types.MethodDescriptorType,
        types.MethodWrapperType,
        types.WrapperDescriptorType,
        types.ClassMethodDescriptorType,
    }
)
#: Every value type the value checks look at (modules and the built-in method kinds).
_SUSPECT = _BUILTIN_KINDS | {ModuleType}

#: Types whose instances any bot may change (it can only hold ones it made or got as copies).
WRITABLE_TYPES = frozenset(
    {list, dict, set, collections.deque, collections.defaultdict, collections.OrderedDict, collections.Counter}
)


def _special(ob: Any, name: str) -> None:
    """Refuse the dangerous uses of the names in :data:`_SPECIAL`."""
    if name == "mro" and isinstance(ob, type):
        raise AttributeError('"mro" is not available to bots')
    if name == "obj" and isinstance(ob, BaseException):
        raise AttributeError('"obj" of an exception is not available to bots')
    if (
        name in ("Formatter", "get_field", "get_value", "vformat")
        and not isinstance(ob, ModuleType)
        and type(ob).__module__ == "string"
    ):
        raise AttributeError("string.Formatter is not available to bots")


def _vet(value: Any, name: str, module_ids: Collection[int]) -> None:
    """Refuse a value a bot may not hold whatever the name it came by (``value``'s type is suspect)."""
    if type(value) is ModuleType:
        if id(value) not in module_ids:
            raise AttributeError(f'"{name}" is a module bots may not use')
    elif value.__name__ in FORMAT_NAMES and is_str_formatter(value):
        raise AttributeError(f'"{name}" is str.format, which bots may use only as "...".format')


def full_getattr(module_ids: Collection[int]) -> Callable[..., Any]:
    """``getattr`` for bots, name and value checked: the builtin, and ``_getattr_`` for
    the names that need a closer look."""
    real_getattr = getattr
    suspect = _SUSPECT

    def guarded_getattr(ob: Any, name: Any, *default: Any) -> Any:
        """``getattr`` for bots: never ``_`` names, frames, ``str.format``, foreign modules."""
        if type(name) is not str:
            raise TypeError("attribute name must be str")
        if name[:1] == "_" or name in FORBIDDEN_ATTRS:
            raise AttributeError(
                f'"{name}" is not available to bots (names starting with "_" and frame/code attributes are refused)'
            )
        if name in FORMAT_NAMES:
            return format_attribute(ob, name, real_getattr)
        if name in _SPECIAL:
            _special(ob, name)
        value = real_getattr(ob, name, default[0]) if default else real_getattr(ob, name)
        if type(value) in suspect:
            _vet(value, name, module_ids)
        return value

    return guarded_getattr


def attr_guard(module_ids: Collection[int]) -> Callable[[Any, str], Any]:
    """``_attr_`` for ``a.name`` in compiled bot code when the load-time pass found ``name``
    plain (not ``_``, not a frame/code attribute, not one of :data:`.transform.CLOSER_LOOK`):
    only the value is left to check."""
    real_getattr = getattr
    suspect = _SUSPECT

    def attr(ob: Any, name: str) -> Any:
        value = real_getattr(ob, name)
        if type(value) in suspect:
            _vet(value, name, module_ids)
        return value

    return attr


def write_guard(classes: Collection[type]) -> Callable[[Any], Any]:
    """``_write_``: the object itself when a bot may change it, else ``TypeError``."""
    writable = WRITABLE_TYPES

    def guarded_write(ob: Any) -> Any:
        t = type(ob)
        if t in writable or t in classes or (isinstance(ob, type) and ob in classes):
            return ob
        raise TypeError(f"a bot may change only its own objects, not a {t.__name__}")

    return guarded_write


def getitem_guard(ob: Any, index: Any) -> Any:
    """``_getitem_`` for a computed index: no ``_`` keys of read-only mappings."""
    if type(index) is str and index[:1] == "_" and type(ob) is types.MappingProxyType:
        raise KeyError(index)
    return ob[index]


def super_init(obj: Any) -> Any:
    """``super().__init__``, the one ``_`` attribute bots may read, on a real ``super`` only."""
    if type(obj) is not super:
        raise AttributeError('"__init__" is available to bots only as super().__init__')
    proxy: Any = obj  # a super() proxy: its __init__ is the parent class's, bound to the bot's instance
    return proxy.__init__
