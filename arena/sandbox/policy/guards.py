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
    a ``_`` key (a ``str`` or a ``str`` subclass) on a read-only mapping (history
    events, rules) is refused; :class:`KeyGuard` is the same check for inlined code.
``value_vet`` (``_vet_``)
    the value checks of ``attr_guard`` alone, for the reads :mod:`.inline` wrote into
    the code (it calls this only for modules and built-in methods named like ``str.format``).

Most calls never reach these functions: :mod:`.inline` writes their common case into
the compiled code (with :data:`SUSPECT`, the value types it checks further).
"""

from __future__ import annotations

import abc
import collections
import types
from collections.abc import Callable, Collection
from typing import Any

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from .formatting import FORMAT_NAMES, format_attribute, is_str_formatter

__all__ = [
    "PLAIN_RECEIVERS",
    "SUSPECT",
    "WRITABLE_TYPES",
    "KeyGuard",
    "value_vet",
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
_SPECIAL = frozenset({"mro", "obj", "register", "Formatter", "get_field", "get_value", "vformat"})
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
SUSPECT = _SUSPECT


def _plain_receivers() -> frozenset[type]:
    from ...botapi.turn import PlayerInfo, Turn
    from ...game.cards import Card

    return frozenset(
        {list, tuple, dict, set, frozenset, str, int, float, bool, range, types.MappingProxyType}
        | {collections.deque, Card, PlayerInfo, Turn}
    )


#: Exact receiver types whose plain attribute reads need no value check: no instance
#: ``__dict__``, a type a bot cannot change (built-in, or refused by ``_write_``), and every
#: public attribute a method of the type (bound to a non-``str``, or a ``str`` method other
#: than ``format``/``format_map``, which never take this road) or a datum the arena set
#: (a ``str``, an ``int``). tests/sandbox/policy/test_policy_inline.py checks each on live instances.
PLAIN_RECEIVERS = _plain_receivers()

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
    if name == "register" and isinstance(ob, abc.ABCMeta):
        # ABCMeta.register writes into the registry of a class the bot does not own (and a
        # bot's own ABC subclass answers for its bases: isinstance(card, Mapping) would be true)
        raise AttributeError('"register" of an abstract base class is not available to bots')
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
    only the value is left to check. (Where :mod:`.inline` could not write the check into
    the code: class bodies, comprehension iterables.)"""

    def attr(
        ob: Any, name: str, getattr: Any = getattr, type: Any = type, suspect: Any = _SUSPECT, vet: Any = _vet
    ) -> Any:
        value = getattr(ob, name)
        if type(value) in suspect:
            vet(value, name, module_ids)
        return value

    return attr


def value_vet(module_ids: Collection[int]) -> Callable[[Any, str], Any]:
    """``_vet_``: the value checks of :func:`attr_guard` on an already read value (inlined
    reads call it only for modules and built-in methods). A built-in method bound to
    something that is neither a ``str`` nor a class (``event.get``, ``seen.add``,
    ``math.sqrt``) cannot be ``str.format``: returned at once."""
    method = types.BuiltinMethodType

    def vet(value: Any, name: str) -> Any:
        if type(value) is method and not isinstance(value.__self__, (str, type)):
            return value
        if type(value) in _SUSPECT:
            _vet(value, name, module_ids)
        return value

    return vet


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
    if type(ob) is types.MappingProxyType:
        if type(index) is str:
            if index[:1] == "_":
                raise KeyError(index)
        elif isinstance(index, str) and str.startswith(index, "_"):  # a bot's str subclass may lie
            raise KeyError(index)
    return ob[index]


class KeyGuard:
    """A read-only mapping as inlined subscripts see it: ``[key]`` is :func:`getitem_guard`.

    (``str.startswith`` unbound: a bot's ``str`` subclass may define its own ``startswith``.)
    """

    __slots__ = ("mapping",)

    def __init__(self, mapping: types.MappingProxyType[Any, Any]) -> None:
        self.mapping = mapping

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, str) and str.startswith(index, "_"):
            raise KeyError(index)
        return self.mapping[index]


def super_init(obj: Any) -> Any:
    """``super().__init__``, the one ``_`` attribute bots may read, on a real ``super`` only."""
    if type(obj) is not super:
        raise AttributeError('"__init__" is available to bots only as super().__init__')
    proxy: Any = obj  # a super() proxy: its __init__ is the parent class's, bound to the bot's instance
    return proxy.__init__
