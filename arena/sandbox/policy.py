"""Layer 1, the code policy: bot source compiled and run under RestrictedPython 9.

A bot file is compiled with ``compile_restricted_exec`` (no names or
attributes that start with ``_``, no ``exec``/``eval``, no ``try/except*``,
no ``nonlocal``...) and executed with a small, vetted set of builtins and the
guards RestrictedPython's transformed code calls:

``_getattr_``
    :func:`guarded_getattr`: ``_`` names, frame/generator/traceback/code
    attributes, ``type.mro`` and ``AttributeError.obj`` refused;
    ``format``/``format_map`` only through :mod:`.formatting` (plain fields
    on an exact ``str``, whatever the receiver or the name it is fetched by); a module value that is not one the bot
    imported is refused (``statistics.sys`` would be the real ``sys``).
``_write_``
    assignment to attributes or items only on plain containers
    (list, dict, set, deque...) and on classes the bot's own code defined and
    their instances (``self.seen = set()`` works; ``card.rank = "a"`` does not).
``_getitem_``, ``_getiter_``, ``_unpack_sequence_``, ``_iter_unpack_sequence_``, ``_inplacevar_``, ``_apply_``
    guarded item access, iteration and unpacking; ``__import__`` serves only
    the modules of docs/bot-api.md, each a stand-in or a read-only facade.

This layer alone is *not* a sandbox (RestrictedPython says so itself): it
limits neither time nor memory. The worker process (layer 2) does that.
"""

from __future__ import annotations

import ast
import builtins as _builtins
import collections
import operator
import re
import types
import warnings
from collections.abc import Callable
from typing import Any

from RestrictedPython.compile import compile_restricted_exec
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence, safe_builtins
from RestrictedPython.transformer import INSPECT_ATTRIBUTES, RestrictingNodeTransformer

from ..botenv import (
    ALLOWED_IMPORTS,
    PLAIN_MODULES,
    BotRandom,
    make_arena_module,
    make_functools_module,
    make_random_module,
)
from ..errors import BotLoadError
from ..loader import BotSource, parse_source
from .formatting import FORMAT_NAMES, format_attribute, is_str_formatter

__all__ = ["BotNamespace", "check_source", "compile_bot", "instantiate", "ARENA_NAMES", "OutputSink"]

#: What ``from arena import ...`` may name.
ARENA_NAMES = frozenset({"Card", "IllegalMove", "SUITS", "RANKS"})

ModuleType = types.ModuleType

#: Attribute names that need a closer look whatever the object (see :func:`guarded_getattr`).
_SPECIAL = frozenset({"mro", "obj", "Formatter", "get_field", "get_value", "vformat"})
_FORBIDDEN_ATTRS = frozenset(INSPECT_ATTRIBUTES)
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

#: Types whose instances any bot may change (it can only hold ones it made or got as copies).
WRITABLE_TYPES = frozenset(
    {list, dict, set, collections.deque, collections.defaultdict, collections.OrderedDict, collections.Counter}
)


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


# -- output -------------------------------------------------------------------------------


class OutputSink:
    """Collects a bot's printed text, at most ``limit`` characters per game; the rest is dropped."""

    __slots__ = ("limit", "used", "parts", "truncated")

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self.used = 0
        self.parts: list[str] = []
        self.truncated = False

    def write(self, text: str) -> None:
        room = self.limit - self.used
        if room <= 0:
            self.truncated = True
            return
        if len(text) > room:
            text = text[:room]
            self.truncated = True
        self.used += len(text)
        self.parts.append(text)

    def take(self) -> str:
        """The text collected since the last call (a truncation mark when some was dropped)."""
        if not self.parts and not self.truncated:
            return ""
        text = "".join(self.parts)
        if self.truncated:
            text += "\n[output truncated]\n"
            self.truncated = False
            self.used = self.limit + 1  # the mark is given once
        self.parts.clear()
        return text

    def reset(self) -> None:
        self.used = 0
        self.parts.clear()
        self.truncated = False


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


# -- guards -------------------------------------------------------------------------------


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


class BotNamespace:
    """Everything one bot instance's code runs with: builtins, guards, importer, its classes.

    Made fresh for each game (and seed); the compiled code is shared.
    """

    def __init__(self, seed: int, sink: OutputSink | None = None) -> None:
        self.sink = sink if sink is not None else OutputSink()
        self.classes: set[type] = set()
        modules: dict[str, ModuleType | BotRandom] = dict(FACADES)
        modules["random"] = make_random_module(seed)
        modules["functools"] = make_functools_module()
        modules["arena"] = make_arena_module()
        for name in [n for n in vars(modules["arena"]) if not n.startswith("_") and n not in ARENA_NAMES]:
            delattr(modules["arena"], name)
        self.modules = modules
        self.module_set = frozenset(id(m) for m in modules.values())
        self.builtins = self._builtins()

    # -- the guards ------------------------------------------------------------------------
    def _fast_getattr(self) -> Callable[[Any, str], Any]:
        special, forbidden, module_ids = _SPECIAL, _FORBIDDEN_ATTRS, self.module_set
        format_names, builtin_kinds = FORMAT_NAMES, _BUILTIN_KINDS
        real_getattr = getattr

        def guarded_getattr(ob: Any, name: Any, *default: Any) -> Any:
            """``getattr`` for bots: never ``_`` names, frames, ``str.format``, foreign modules."""
            if type(name) is not str:
                raise TypeError("attribute name must be str")
            if name[:1] == "_" or name in forbidden:
                raise AttributeError(
                    f'"{name}" is not available to bots (names starting with "_" and frame/code attributes are refused)'
                )
            if name in format_names:
                return format_attribute(ob, name, real_getattr)
            if name in special:
                _special(ob, name)
            if default:
                value = real_getattr(ob, name, default[0])
            else:
                value = real_getattr(ob, name)
            t = type(value)
            if t is ModuleType and id(value) not in module_ids:
                raise AttributeError(f'"{name}" is a module bots may not use')
            if t in builtin_kinds and is_str_formatter(value):
                raise AttributeError(f'"{name}" is str.format, which bots may use only as "...".format')
            return value

        return guarded_getattr

    def _attr_guard(self) -> Callable[[Any, str], Any]:
        """``_getattr_`` for ``a.b`` in compiled bot code: the compiler has already refused ``_``
        and frame/code names (the name is a literal), so only the closer looks remain."""
        special, module_ids = _SPECIAL, self.module_set
        format_names, builtin_kinds = FORMAT_NAMES, _BUILTIN_KINDS
        real_getattr = getattr

        def attr(ob: Any, name: str) -> Any:
            if name in format_names:
                return format_attribute(ob, name, real_getattr)
            if name in special:
                _special(ob, name)
            value = real_getattr(ob, name)
            t = type(value)
            if t is ModuleType and id(value) not in module_ids:
                raise AttributeError(f'"{name}" is a module bots may not use')
            if t in builtin_kinds and is_str_formatter(value):
                raise AttributeError(f'"{name}" is str.format, which bots may use only as "...".format')
            return value

        return attr

    def _write_guard(self) -> Callable[[Any], Any]:
        writable, classes = WRITABLE_TYPES, self.classes

        def guarded_write(ob: Any) -> Any:
            t = type(ob)
            if t in writable or t in classes or (isinstance(ob, type) and ob in classes):
                return ob
            raise TypeError(f"a bot may change only its own objects, not a {t.__name__}")

        return guarded_write

    def _metaclass(self) -> Callable[..., type]:
        classes = self.classes

        def bot_class(name: str, bases: tuple[type, ...], ns: dict[str, Any], **kw: Any) -> type:
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
        getattr_ = self._fast_getattr()
        it = iter

        def guarded_iter(ob: Any, *sentinel: Any) -> Any:
            """The one iteration hook (``_getiter_``); every iterating helper goes through it."""
            return it(ob, *sentinel) if sentinel else it(ob)

        def guarded_getitem(ob: Any, index: Any) -> Any:
            if type(index) is str and index[:1] == "_" and isinstance(ob, types.MappingProxyType):
                raise KeyError(index)
            return ob[index]

        def g_hasattr(ob: Any, name: Any) -> bool:
            try:
                getattr_(ob, name)
            except (AttributeError, NotImplementedError):
                return False
            return True

        def g_sorted(iterable: Any, /, *, key: Any = None, reverse: bool = False) -> list[Any]:
            return sorted(guarded_iter(iterable), key=key, reverse=reverse)

        def g_min(*args: Any, **kw: Any) -> Any:
            return min(guarded_iter(args[0]), **kw) if len(args) == 1 else min(*args, **kw)

        def g_max(*args: Any, **kw: Any) -> Any:
            return max(guarded_iter(args[0]), **kw) if len(args) == 1 else max(*args, **kw)

        def g_sum(iterable: Any, /, start: Any = 0) -> Any:
            return sum(guarded_iter(iterable), start)

        def g_any(iterable: Any, /) -> bool:
            return any(guarded_iter(iterable))

        def g_all(iterable: Any, /) -> bool:
            return all(guarded_iter(iterable))

        def g_enumerate(iterable: Any, start: int = 0) -> Any:
            return enumerate(guarded_iter(iterable), start)

        def g_zip(*iterables: Any, strict: bool = False) -> Any:
            return zip(*[guarded_iter(i) for i in iterables], strict=strict)

        def g_map(function: Any, *iterables: Any) -> Any:
            return map(function, *[guarded_iter(i) for i in iterables])

        def g_filter(function: Any, iterable: Any) -> Any:
            return filter(function, guarded_iter(iterable))

        def g_reversed(seq: Any) -> Any:
            if isinstance(seq, (list, tuple, str, range, dict)):
                return reversed(seq)
            return reversed(list(guarded_iter(seq)))

        write = self._write_guard()

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

        ops: dict[str, Callable[[Any, Any], Any]] = {
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

        def inplacevar(op: str, x: Any, y: Any) -> Any:
            return ops[op](x, y)

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
                "iter": guarded_iter,
                "sorted": g_sorted,
                "min": g_min,
                "max": g_max,
                "sum": g_sum,
                "any": g_any,
                "all": g_all,
                "enumerate": g_enumerate,
                "zip": g_zip,
                "map": g_map,
                "filter": g_filter,
                "reversed": g_reversed,
                "getattr": getattr_,
                "hasattr": g_hasattr,
                "setattr": g_setattr,
                "delattr": g_delattr,
                "super": super,
                "property": property,
                "staticmethod": staticmethod,
                "classmethod": classmethod,
                "NotImplemented": NotImplemented,
                "StopIteration": StopIteration,
                "__import__": self._importer(),
                "__build_class__": _builtins.__build_class__,
            }
        )
        self.guards = {
            "_getattr_": self._attr_guard(),
            "_getitem_": guarded_getitem,
            "_getiter_": guarded_iter,
            "_write_": write,
            "_inplacevar_": inplacevar,
            "_apply_": g_apply,
            "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
            "_unpack_sequence_": guarded_unpack_sequence,
            "_print_": _print_factory(self.sink),
            "__metaclass__": self._metaclass(),
            "_super_init_": _super_init,
        }
        return env

    def globals(self) -> dict[str, Any]:
        """A fresh module namespace for the bot's code."""
        ns: dict[str, Any] = {"__builtins__": self.builtins, "__name__": "bot"}
        ns.update(self.guards)
        return ns


# -- compiling and checking --------------------------------------------------------------


class _AugmentedAssignment(ast.NodeTransformer):
    """``a.b += c`` and ``a[k] += c`` (which RestrictedPython refuses outright) rewritten as
    ``a.b = a.b + c`` style assignments, which it then guards like any other; ``a`` and ``k``
    must be plain names or constants so nothing is evaluated twice."""

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        target = node.target
        simple = (ast.Name, ast.Constant)
        if isinstance(target, ast.Attribute) and isinstance(target.value, (ast.Name, ast.Attribute)):
            if not _pure(target.value):
                return node
        elif (
            isinstance(target, ast.Subscript)
            and _pure(target.value)
            and (isinstance(target.slice, simple) or _pure(target.slice))
        ):
            pass
        else:
            return node
        load = _as_load(target)
        new = ast.Assign(targets=[target], value=ast.BinOp(left=load, op=node.op, right=node.value))
        return ast.copy_location(new, node)


class BotPolicy(RestrictingNodeTransformer):
    """RestrictedPython's policy plus one allowance: ``super().__init__`` (zero-argument
    ``super`` only), checked again at run time to really be a ``super`` object."""

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        value = node.value
        if (
            node.attr == "__init__"
            and isinstance(node.ctx, ast.Load)
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "super"
            and not value.args
            and not value.keywords
        ):
            call = ast.Call(func=ast.Name("_super_init_", ast.Load()), args=[self.visit(value)], keywords=[])
            for part in (call, call.func):
                ast.copy_location(part, node)
            return call
        return super().visit_Attribute(node)


def _super_init(obj: Any) -> Any:
    if type(obj) is not super:
        raise AttributeError('"__init__" is available to bots only as super().__init__')
    proxy: Any = obj  # a super() proxy: its __init__ is the parent class's, bound to the bot's instance
    return proxy.__init__


def _pure(node: ast.AST) -> bool:
    """A chain of names and attributes (``self``, ``self.stats``): safe to evaluate twice."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, (ast.Name, ast.Constant))


def _as_load(node: ast.expr) -> ast.expr:
    copy = ast.parse(ast.unparse(node), mode="eval").body
    return ast.copy_location(copy, node)


_LINE = re.compile(r"^Line (\d+): (.*)$", re.S)


def _where(src: BotSource) -> str:
    return src.label


def compile_bot(src: BotSource) -> types.CodeType:
    """Compile bot source under the policy.

    :raises BotLoadError: too large, a syntax error, or anything the policy refuses (with the line).
    """
    with warnings.catch_warnings():  # a bot's SyntaxWarnings must not flood the referee's terminal
        warnings.simplefilter("ignore")
        return _compile_bot(src)


def _compile_bot(src: BotSource) -> types.CodeType:
    if src.problem:
        raise BotLoadError(src.problem, path=_where(src))
    tree = parse_source(src.source, _where(src))  # size, text, syntax and nesting checked here
    _check_imports(tree, src)
    try:
        tree = ast.fix_missing_locations(_AugmentedAssignment().visit(tree))
        result = compile_restricted_exec(tree, filename="<bot>", policy=BotPolicy)
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError, OverflowError) as exc:
        raise BotLoadError(f"cannot compile: {type(exc).__name__}: {exc}"[:200], path=_where(src)) from None
    if result.errors or result.code is None:
        first = result.errors[0] if result.errors else "refused by the code policy"
        match = _LINE.match(first)
        line, message = (int(match.group(1)), match.group(2)) if match else (None, first)
        raise BotLoadError(f"not allowed: {message}"[:300], path=_where(src), line=line)
    return result.code


def _check_imports(tree: ast.Module, src: BotSource) -> None:
    """Static check of every import statement against the allowlist."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in ALLOWED_IMPORTS:
                    raise BotLoadError(
                        f"import of {alias.name!r} not allowed; bots may import only {', '.join(ALLOWED_IMPORTS)}",
                        path=_where(src),
                        line=node.lineno,
                    )
        elif isinstance(node, ast.ImportFrom):
            if node.level or node.module not in ALLOWED_IMPORTS:
                name = "." * node.level + (node.module or "")
                raise BotLoadError(
                    f"import from {name!r} not allowed; bots may import only {', '.join(ALLOWED_IMPORTS)}",
                    path=_where(src),
                    line=node.lineno,
                )
            if node.module == "arena":
                for alias in node.names:
                    if alias.name not in ARENA_NAMES:
                        raise BotLoadError(
                            f"from arena a bot may import only {', '.join(sorted(ARENA_NAMES))}; not {alias.name!r}",
                            path=_where(src),
                            line=node.lineno,
                        )


def _accepts_two(fn: ast.FunctionDef) -> bool:
    """Whether ``def move(...)`` can be called as ``bot.move(turn)``."""
    a = fn.args
    positional = len(a.posonlyargs) + len(a.args)
    if positional < 2 and a.vararg is None:
        return False
    required_pos = positional - len(a.defaults)
    if required_pos > 2:
        return False
    return all(d is not None for d in a.kw_defaults)


def check_source(src: BotSource) -> None:
    """Everything that can be checked without running the bot.

    :raises BotLoadError: source too large, syntax error, a policy violation (``_`` names,
        ``exec``/``eval``, an import outside the allowlist...), no ``Bot`` class, or a
        ``move`` that cannot be called as ``move(self, turn)``.
    """
    compile_bot(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = parse_source(src.source, _where(src))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    bot = classes.get("Bot")
    if bot is None:
        assigned = any(
            isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "Bot" for t in n.targets)
            for n in tree.body
        )
        if not assigned:
            raise BotLoadError("defines no class named Bot", path=_where(src))
        return
    seen: set[str] = set()
    todo = [bot]
    while todo:
        cls = todo.pop(0)
        if cls.name in seen:
            continue
        seen.add(cls.name)
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == "move":
                if item.decorator_list:
                    return  # decorated: cannot judge statically
                if not _accepts_two(item):
                    raise BotLoadError("Bot.move must accept (self, turn)", path=_where(src), line=item.lineno)
                return
            if isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "move" for t in item.targets):
                return
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in classes:
                todo.append(classes[base.id])
            elif not (isinstance(base, ast.Name) and base.id == "object"):
                return  # inherits from something we cannot see: judged at load time
    raise BotLoadError("class Bot has no move(self, turn) method", path=_where(src), line=bot.lineno)


def instantiate(code: types.CodeType, src: BotSource, seed: int, sink: OutputSink | None = None) -> Any:
    """Run the compiled module in a fresh restricted namespace and return ``Bot()``.

    :raises BotLoadError: the module code raised, there is no ``Bot`` class, or ``Bot()`` failed.
    """
    space = BotNamespace(seed, sink)
    ns = space.globals()
    try:
        exec(code, ns)
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: it is the bot's
        raise BotLoadError(f"error while loading: {_short(exc)}", path=_where(src)) from None
    cls = ns.get("Bot")
    if not isinstance(cls, type):
        raise BotLoadError("defines no class named Bot", path=_where(src))
    if not callable(getattr(cls, "move", None)):
        raise BotLoadError("class Bot has no move(self, turn) method", path=_where(src))
    try:
        return cls()
    except BaseException as exc:  # noqa: BLE001
        raise BotLoadError(f"Bot() failed: {_short(exc)}", path=_where(src)) from None


def _short(exc: BaseException, limit: int = 200) -> str:
    """``Type: message (line N)`` of a bot exception, short and safe to show."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<bot>":
            line = tb.tb_lineno
        tb = tb.tb_next
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - a broken __str__ is the bot's
        message = "?"
    text = f"{type(exc).__name__}: {message[:limit]}" if message else type(exc).__name__
    if line:
        text += f" (line {line})"
    return text[: limit + 40]
