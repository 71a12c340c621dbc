"""Layer 1, the code policy: bot source compiled and run under RestrictedPython 9.

A bot file is checked and compiled at load time (:mod:`.transform`: no names or
attributes that start with ``_``, no frame/code attributes, no
``exec``/``eval``, no ``try/except*``, no ``nonlocal``, imports from the
allowlist only...; guard calls whose answer the source decides are taken back
there) and executed with a small, vetted set of builtins
(:mod:`.namespace`) and the run-time guards (:mod:`.guards`) for what
depends on live objects: the value of an attribute read (a foreign module,
``str.format`` by another name), the type of an object written to, a
computed subscript key, a computed attribute name. ``str.format`` itself goes
through :mod:`.formatting`.

This layer alone is *not* a sandbox (RestrictedPython says so itself): it
limits neither time nor memory. The worker process (layer 2) does that.
"""

from __future__ import annotations

import ast
import re
import types
import warnings
from typing import Any

from RestrictedPython.compile import compile_restricted_exec

from ...botapi.imports import ALLOWED_IMPORTS
from ...errors import BotLoadError
from ...trust.botsource import BotSource, parse_source
from .guards import WRITABLE_TYPES
from .namespace import ARENA_NAMES, FACADES, BotNamespace, OutputSink
from .transform import AugmentedAssignment, BotPolicy, GuardCalls

__all__ = [
    "ARENA_NAMES",
    "FACADES",
    "WRITABLE_TYPES",
    "BotNamespace",
    "OutputSink",
    "check_source",
    "compile_bot",
    "instantiate",
]


_LINE = re.compile(r"^Line (\d+): (.*)$", re.S)


def _where(src: BotSource) -> str:
    return src.label


def compile_bot(src: BotSource, policy: type[BotPolicy] = BotPolicy) -> types.CodeType:
    """Compile bot source under the policy (``GuardCalls``: without pass 4, for comparisons).

    :raises BotLoadError: too large, a syntax error, or anything the policy refuses (with the line).
    """
    with warnings.catch_warnings():  # a bot's SyntaxWarnings must not flood the referee's terminal
        warnings.simplefilter("ignore")
        return _compile_bot(src, policy)


def _restricted(src: BotSource, tree: ast.Module, policy: type[BotPolicy]) -> Any:
    """``compile_restricted_exec`` under ``policy``; should the compiler refuse the tree with
    the checks inlined (pass 4 misjudged where a named expression may stand), the source
    again with the guards left as calls, which is the same policy, only slower."""
    try:
        return compile_restricted_exec(tree, filename="<bot>", policy=policy)
    except SyntaxError:
        if not policy.inline:
            raise
    tree = parse_source(src.source, _where(src))
    tree = ast.fix_missing_locations(AugmentedAssignment().visit(tree))
    return compile_restricted_exec(tree, filename="<bot>", policy=GuardCalls)


def _compile_bot(src: BotSource, policy: type[BotPolicy]) -> types.CodeType:
    if src.problem:
        raise BotLoadError(src.problem, path=_where(src))
    tree = parse_source(src.source, _where(src))  # size, text, syntax and nesting checked here
    _check_imports(tree, src)
    try:
        tree = ast.fix_missing_locations(AugmentedAssignment().visit(tree))
        result = _restricted(src, tree, policy)
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError, OverflowError) as exc:
        raise BotLoadError(f"cannot compile: {type(exc).__name__}: {exc}"[:200], path=_where(src)) from None
    if result.errors or result.code is None:
        first = result.errors[0] if result.errors else "refused by the code policy"
        match = _LINE.match(first)
        line, message = (int(match.group(1)), match.group(2)) if match else (None, first)
        raise BotLoadError(f"not allowed: {message}"[:300], path=_where(src), line=line)
    code: types.CodeType = result.code
    return code


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
        ``move`` that cannot be called as ``move(self, turn)``. A bot program (not Python,
        docs/protocol.md) has no code policy: only a problem met reading it is raised.
    """
    if src.runtime != "python":
        if src.problem:
            raise BotLoadError(src.problem, path=_where(src))
        return
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


def instantiate(
    code: types.CodeType, src: BotSource, seed: int, sink: OutputSink | None = None, space: BotNamespace | None = None
) -> Any:
    """Run the compiled module in a fresh restricted namespace and return ``Bot()``.

    ``space``: a namespace made beforehand and never used (a template builds it before it
    forks the game process), seeded here; else one is made now.

    :raises BotLoadError: the module code raised, there is no ``Bot`` class, or ``Bot()`` failed.
    """
    if space is None:
        space = BotNamespace(seed, sink)
    else:
        space.take(seed)
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
