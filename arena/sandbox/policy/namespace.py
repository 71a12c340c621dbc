"""Layer 1: what one bot instance's code runs with: builtins, guards, stand-in modules, output.

Made fresh for each game (and seed) by :class:`BotNamespace`; the compiled
code (:mod:`.compiler`) is shared. The builtins are a vetted allowlist: no
``type``, ``vars``, ``dir``, ``open``, ``eval``, ``id``...; ``getattr``,
``hasattr``, ``setattr`` and ``delattr`` check their (computed) names; the
iterating builtins are CPython's own, because iteration reaches no attribute
by name (there is nothing for a guard to refuse, see :mod:`.transform`). The
helpers that write attributes for their caller (``functools.total_ordering``,
``lru_cache``, ``cache``, and ``__set_name__`` of class-body values) act only on
the bot's own functions and classes (:meth:`BotNamespace.owned`; every reachable
helper is filed in tests/sandbox/policy/test_policy_helpers.py).
"""

from __future__ import annotations

import builtins as _builtins
import functools
import operator
import types
from collections.abc import Callable
from typing import Any

from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence, safe_builtins

from ...botapi.imports import (
    ALLOWED_IMPORTS,
    PLAIN_MODULES,
    BotRandom,
    make_arena_module,
    make_functools_module,
    make_random_module,
)
from .formatting import percent_operand
from .guards import (
    PLAIN_RECEIVERS,
    SUSPECT,
    WRITABLE_TYPES,
    KeyGuard,
    attr_guard,
    full_getattr,
    getitem_guard,
    super_init,
    value_vet,
    write_guard,
)
from .transform import PLAIN_ATTR_GUARD

__all__ = ["ARENA_NAMES", "FACADES", "BotNamespace", "OutputSink"]

#: What ``from arena import ...`` may name.
ARENA_NAMES = frozenset({"Card", "IllegalMove", "SUITS", "RANKS", "sample_world", "sampler"})

ModuleType = types.ModuleType
_LRU_WRAPPER = type(functools.lru_cache(None)(len))


def _facade(module: ModuleType) -> ModuleType:
    """A read-only-by-policy copy of ``module`` with only its public, non-module, immutable-ish names."""
    copy = ModuleType(module.__name__, module.__doc__)
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, (ModuleType, list, dict, set, bytearray)):
            continue
        setattr(copy, name, value)
    return copy


#: The plain modules as bots see them (built once per process; bots cannot change modules).
FACADES: dict[str, ModuleType] = {name: _facade(mod) for name, mod in PLAIN_MODULES.items()}

_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "|=": operator.ior,
    "&=": operator.iand,
    "^=": operator.ixor,
    "@=": operator.imatmul,
}


# -- output -------------------------------------------------------------------------------


class OutputSink:
    """Collects a bot's printed text, at most ``limit`` characters per game; the rest is dropped."""

    __slots__ = ("limit", "used", "parts", "truncated", "marked")

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self.used = 0
        self.parts: list[str] = []
        self.truncated = False
        self.marked = False  # the truncation mark was given: the rest of the game is dropped silently

    def write(self, text: str) -> None:
        room = self.limit - self.used
        if room <= 0:
            self.truncated = not self.marked
            return
        if len(text) > room:
            text = text[:room]
            self.truncated = True
        self.used += len(text)
        self.parts.append(text)

    def take(self) -> str:
        """The text collected since the last call (the truncation mark, once a game, when some
        was dropped)."""
        if not self.parts and not self.truncated:
            return ""
        text = "".join(self.parts)
        if self.truncated:
            text += "\n[output truncated]\n"
            self.truncated = False
            self.marked = True
        self.parts.clear()
        return text

    def reset(self) -> None:
        self.used = 0
        self.parts.clear()
        self.truncated = False
        self.marked = False


def _print_factory(sink: OutputSink) -> Callable[..., Any]:
    """The ``_print_`` RestrictedPython calls in each function that uses ``print``."""

    class CappedPrint:
        __slots__ = ("lines",)

        def __init__(self, _getattr_: Any = None) -> None:
            self.lines: list[str] = []

        def _call_print(
            self, *objects: Any, sep: Any = " ", end: Any = "\n", file: Any = None, flush: bool = False
        ) -> None:
            sep = " " if sep is None else sep
            end = "\n" if end is None else end
            if type(sep) is not str or type(end) is not str:
                raise TypeError("print: sep and end must be str")
            text = sep.join([str(o) for o in objects]) + end
            if len(self.lines) < 64:
                self.lines.append(text[:256])
            sink.write(text)

        def __call__(self) -> str:  # the ``printed`` name
            return "".join(self.lines)

    return CappedPrint


#: Made once by :func:`_static_builtins` (the names a namespace sets itself hold None there).
_STATIC: dict[str, Any] = {}

#: The builtins made per namespace (closures over its guards), in :func:`_static_builtins` as None.
_PER_NAMESPACE = ("reversed", "getattr", "hasattr", "setattr", "delattr", "__import__")


def _static_builtins() -> dict[str, Any]:
    """The allowlisted builtins, in the order a namespace holds them, those of
    :data:`_PER_NAMESPACE` as None (set by :meth:`BotNamespace._builtins`): made once, copied
    per namespace (a dict copy instead of some sixty stores)."""
    if _STATIC:
        return _STATIC
    env = dict(safe_builtins)
    for name in ("setattr", "delattr", "_getattr_", "id"):
        env.pop(name, None)
    env.update(
        {
            "list": list,
            "tuple": tuple,
            "dict": dict,
            "set": set,
            "frozenset": frozenset,
            "str": str,
            "int": int,
            "float": float,
            "bool": bool,
            "complex": complex,
            "object": object,
            "range": range,
            "slice": slice,
            "len": len,
            "abs": abs,
            "round": round,
            "divmod": divmod,
            "pow": pow,
            "repr": repr,
            "hash": hash,
            "isinstance": isinstance,
            "issubclass": issubclass,
            "callable": callable,
            "chr": chr,
            "ord": ord,
            "bin": bin,
            "hex": hex,
            "oct": oct,
            "ascii": ascii,
            "format": format,
            "next": next,
            "iter": iter,
            "sorted": sorted,
            "min": min,
            "max": max,
            "sum": sum,
            "any": any,
            "all": all,
            "enumerate": enumerate,
            "zip": zip,
            "map": map,
            "filter": filter,
            "reversed": None,
            "getattr": None,
            "hasattr": None,
            "setattr": None,
            "delattr": None,
            "super": super,
            "property": property,
            "staticmethod": staticmethod,
            "classmethod": classmethod,
            "NotImplemented": NotImplemented,
            "StopIteration": StopIteration,
            "__import__": None,
            "__build_class__": _builtins.__build_class__,
        }
    )
    _STATIC.update(env)
    return _STATIC


# -- the namespace ------------------------------------------------------------------------


class BotNamespace:
    """Everything one bot instance's code runs with: builtins, guards, importer, its classes.

    Made fresh for each game (and seed); the compiled code is shared.
    """

    def __init__(self, seed: int, sink: OutputSink | None = None) -> None:
        self.sink = sink if sink is not None else OutputSink()
        self.classes: set[type] = set()
        #: The module namespaces of the bot's code (see :meth:`globals`): its functions' globals.
        self.spaces: list[dict[str, Any]] = []
        modules: dict[str, ModuleType | BotRandom] = dict(FACADES)
        modules["random"] = make_random_module(seed)
        modules["functools"] = self._functools()
        modules["arena"] = make_arena_module()
        for name in [n for n in vars(modules["arena"]) if not n.startswith("_") and n not in ARENA_NAMES]:
            delattr(modules["arena"], name)
        self.modules = modules
        self.module_set = frozenset(id(m) for m in modules.values())
        self.builtins = self._builtins()
        self.taken = False

    def take(self, seed: int) -> None:
        """Give this (unused) namespace to one bot instance with ``seed``: the bot's ``random``
        is reseeded, as if made with it (a template builds the namespace before the fork)."""
        if self.taken:
            raise RuntimeError("a bot namespace serves one bot instance only")
        self.taken = True
        self.modules["random"].seed(seed)

    def owned(self, ob: Any) -> bool:
        """Whether ``ob`` is the bot's own code: a function or method of its source (or a cache
        it made of one), or a class of its own."""
        fn = ob.__func__ if type(ob) is types.MethodType else ob
        while type(fn) is _LRU_WRAPPER:  # a cache the bot made of its own function
            fn = fn.__wrapped__
        if type(fn) is types.FunctionType:
            space = fn.__globals__
            return any(space is s for s in self.spaces)
        return isinstance(ob, type) and ob in self.classes

    def _own(self, helper: str, ob: Any) -> Any:
        """``ob`` when :meth:`owned`, else ``TypeError``: what a helper that writes attributes may be given."""
        if self.owned(ob):
            return ob
        raise TypeError(f"functools.{helper}: bots may apply it only to their own functions and classes")

    def _functools(self) -> ModuleType:
        """``functools`` for this bot: its helpers that write attributes take only the bot's
        own objects. ``total_ordering`` writes comparison methods into the class it is given
        (``Card``'s would be the referee's); ``lru_cache``/``cache`` copy the wrapped object's
        ``__dict__`` into the wrapper (a class's raw descriptors) and set ``__wrapped__``."""
        module = make_functools_module()
        own = self._own
        real_lru = functools.lru_cache
        real_total = functools.total_ordering

        def total_ordering(cls: Any) -> Any:
            return real_total(own("total_ordering", cls))

        def lru_cache(maxsize: Any = 128, typed: bool = False) -> Any:
            if callable(maxsize) and not isinstance(maxsize, bool):  # @lru_cache without arguments
                return real_lru(own("lru_cache", maxsize), typed)
            decorate = real_lru(maxsize, typed)

            def decorating_function(user_function: Any) -> Any:
                return decorate(own("lru_cache", user_function))

            return decorating_function

        def cache(user_function: Any) -> Any:
            return real_lru(None)(own("cache", user_function))

        for fn in (total_ordering, lru_cache, cache):
            fn.__module__, fn.__qualname__ = "functools", fn.__name__
            setattr(module, fn.__name__, fn)
        return module

    def _metaclass(self) -> Callable[..., type]:
        classes = self.classes
        owned = self.owned

        def bot_class(name: str, bases: tuple[type, ...], ns: dict[str, Any], **kw: Any) -> type:
            for key, value in ns.items():
                # type() calls __set_name__(cls, key) on each value that has one: on a property
                # of another class (Card.symbol) it would rename that shared object
                if hasattr(type(value), "__set_name__") and not (
                    type(value) is property and all(f is None or owned(f) for f in (value.fget, value.fset, value.fdel))
                ):
                    raise TypeError(f"class {name}: {key} = a {type(value).__name__} the bot did not make")
            cls = type(name, bases, ns, **kw)
            classes.add(cls)
            return cls

        return bot_class

    def _importer(self) -> Callable[..., ModuleType | BotRandom]:
        modules = self.modules

        def bot_import(
            name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
        ) -> ModuleType | BotRandom:
            if level != 0 or type(name) is not str or name not in modules:
                raise ImportError(f"bots may import only {', '.join(ALLOWED_IMPORTS)}; not {name!r}")
            module = modules[name]
            for attr in fromlist or ():
                if type(attr) is not str or attr.startswith("_") or not hasattr(module, attr):
                    raise ImportError(f"cannot import {attr!r} from {name!r}")
            return module

        return bot_import

    def _builtins(self) -> dict[str, Any]:
        getattr_ = full_getattr(self.module_set)
        write = write_guard(self.classes)

        def g_hasattr(ob: Any, name: Any) -> bool:
            try:
                getattr_(ob, name)
            except (AttributeError, NotImplementedError):
                return False
            return True

        def g_reversed(seq: Any) -> Any:
            if isinstance(seq, (list, tuple, str, range, dict)):
                return reversed(seq)
            return reversed(list(seq))

        def g_setattr(ob: Any, name: Any, value: Any) -> None:
            if type(name) is not str or name[:1] == "_":
                raise AttributeError(f'{name!r}: bots may not set names starting with "_"')
            setattr(write(ob), name, value)

        def g_delattr(ob: Any, name: Any) -> None:
            if type(name) is not str or name[:1] == "_":
                raise AttributeError(f'{name!r}: bots may not delete names starting with "_"')
            delattr(write(ob), name)

        def g_apply(f: Any, *args: Any, **kw: Any) -> Any:
            return f(*args, **kw)

        def inplacevar(op: str, x: Any, y: Any) -> Any:
            if op == "%=":
                y = percent_operand(y)  # "%(key)s" reads keys: see formatting.py
            return _INPLACE[op](x, y)

        # The builtins every namespace shares by identity (CPython's own), copied from a dict made
        # once (:func:`_static_builtins`); the per-namespace guards and helpers set in their places.
        env = _static_builtins().copy()
        env["reversed"] = g_reversed
        env["getattr"] = getattr_
        env["hasattr"] = g_hasattr
        env["setattr"] = g_setattr
        env["delattr"] = g_delattr
        env["__import__"] = self._importer()
        self.guards: dict[str, Any] = {
            "_getattr_": getattr_,
            PLAIN_ATTR_GUARD: attr_guard(self.module_set),
            "_getitem_": getitem_guard,
            "_getiter_": iter,
            "_write_": write,
            "_inplacevar_": inplacevar,
            "_apply_": g_apply,
            "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
            "_unpack_sequence_": guarded_unpack_sequence,
            "_print_": _print_factory(self.sink),
            "__metaclass__": self._metaclass(),
            "_super_init_": super_init,
            # what the checks inlined at load time read (arena/sandbox/policy/inline.py)
            "_type_": type,
            "_plain_": PLAIN_RECEIVERS,
            "_suspect_": SUSPECT,
            "_vet_": value_vet(self.module_set),
            "_mp_": types.MappingProxyType,
            "_keyguard_": KeyGuard,
            "_pm_": percent_operand,
            "_writable_": WRITABLE_TYPES,
            "_classes_": self.classes,
        }
        return env

    def globals(self) -> dict[str, Any]:
        """A fresh module namespace for the bot's code."""
        ns: dict[str, Any] = {"__builtins__": self.builtins, "__name__": "bot"}
        ns.update(self.guards)
        self.spaces.append(ns)
        return ns
