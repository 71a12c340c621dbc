"""Layer 1, load time: the run-time guards that are left, written into the bot's code (pass 4).

After :class:`.transform.Unguard` only three guards remain that must look at live
objects: ``_attr_(x, "name")`` (the value of a plain attribute read),
``_getitem_(x, k)`` (a computed subscript) and ``_write_(x)`` (the object a
write changes). Each is a Python function call, and on real bots that call
costs more than the check inside it. This pass writes the common, cheap case of
each check into the compiled expression itself, and calls the guard only when
the cheap case does not decide:

* ``_attr_(X, "n")`` -> ``_r_.n if _type_(_r_ := X) in _plain_ else (_t_ if
  _type_(_t_ := _r_.n) not in _suspect_ else _vet_(_t_, "n"))``: on a receiver of one of
  :data:`.guards.PLAIN_RECEIVERS` (exact built-in containers and scalars, ``Card``,
  ``PlayerInfo``, ``Turn``: no instance dict, every public attribute a method of the type or a
  plain datum, never a module or ``str.format``) the read is plain; otherwise a value
  that is neither a module nor a built-in method is returned at once, and the others
  go to :func:`.guards.value_vet`, the same checks ``_attr_`` makes.
* ``_getitem_(X, K)`` -> ``_o_[K] if _type_(_o_ := X) is not _mp_ else _getitem_(_o_, K)``:
  the guard refuses only ``_`` keys of a read-only mapping (``types.MappingProxyType``,
  exact: it cannot be subclassed), so any other object is subscripted at once. ``K`` is
  written in both branches (one runs) only when it is small and holds no subscript;
  otherwise ``(_o_ if _type_(_o_ := X) is not _mp_ else _keyguard_(_o_))[K]``, where
  :class:`.guards.KeyGuard`'s ``[K]`` is the guard: either way nested subscripts
  cannot make the code grow faster than the source.
* ``_pm_(R)`` (the right operand of a ``%`` with a computed template) ->
  ``_b_ if _type_(_b_ := R) is not _mp_ else _pm_(_b_)``.
* ``_write_(X)`` -> ``(_w_ if _type_(_w_ := X) in _writable_ or _type_(_w_) in _classes_
  else _write_(_w_))``: the guard's own test (the exact type is a plain container or a
  class of the bot's), inline; the rest (a bot class itself, a refusal) is the guard.

Why this is the same check, not a weaker one: ``_type_`` is the ``type`` builtin, and
it, ``_suspect_`` & co. are globals a bot cannot name (``_`` names are refused at load
time), rebind or reach. ``X``, ``K`` and ``n`` are evaluated exactly once and in the
same order as before. Between the assignment of a temporary and its use nothing runs
but C code (``type()``, a set lookup of a type whose metaclass is ``type`` for every
suspect value, an ``is``), so no other evaluation can change the temporary in between;
the object to subscript is on the stack before ``K`` is evaluated, so a subscript
inside ``K`` reusing ``_o_`` changes nothing (and ``K`` is written once, so nested
subscripts cannot blow the code up).

A named expression cannot be used everywhere: not in a class body (it would bind a
class attribute), not in a comprehension inside one, not in a comprehension's iterable,
not in annotations. There the guard calls stay as they were.

**Reads whose value never reaches the bot.** The value check of ``_attr_`` exists so
that a bot never *holds* a module it did not import or ``str.format`` under another
name (to read its attributes, call it, pass it on). Where the source shows that the
value of ``X.n`` is consumed by the interpreter on the spot, the read is plain ``X.n``
(its receiver ``X`` is still checked as usual):

* compared (one operator) with a constant, or a tuple/list/set of constants;
* an operand of an arithmetic or bitwise operator whose other operand is a number
  constant, or of a unary operator;
* subscripted (``X.n[k]``, ``X.n[k] = v``), iterated (``for c in X.n``, a comprehension's
  iterable), truth-tested (``if``/``while``/``assert``/conditional tests, ``not``,
  ``and``/``or`` inside such a test);
* the one positional argument of ``len``, ``list``, ``tuple``, ``set``, ``frozenset``,
  ``sorted``, ``sum``, ``min``, ``max``, ``any``, ``all``, ``enumerate`` or ``reversed``,
  when the module binds that name nowhere (so it is the builtin: a bot cannot reach its
  builtins or globals to change them).

A module or a built-in method only raises ``TypeError`` there or gives a ``bool``, a
number or a new container made by C code; no code of the bot runs with it in hand (a
bot class may define only ``__init__``, the comparisons and ``__contains__``, and the
other operand is a constant, not a bot object). The receiver of a further read
(``X.n.m``), a call (``X.n()``), an assignment, an argument of anything else, a
returned or yielded value: all keep the check.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

__all__ = ["Inline", "INLINE_NAMES"]

#: The globals the inlined checks read (set in :class:`.namespace.BotNamespace`).
INLINE_NAMES = frozenset(
    {"_type_", "_plain_", "_suspect_", "_vet_", "_mp_", "_keyguard_", "_pm_", "_writable_", "_classes_"}
)


def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id_, ast.Store() if store else ast.Load())


def _call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=_name(func), args=list(args), keywords=[])


def _is_guard(node: ast.AST, name: str, nargs: int) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == name
        and len(node.args) == nargs
        and not node.keywords
        and not any(isinstance(a, ast.Starred) for a in node.args)
    )


def _is_plain_read(node: ast.AST) -> bool:
    return (
        _is_guard(node, "_attr_", 2)
        and isinstance(node, ast.Call)
        and isinstance(node.args[1], ast.Constant)
        and type(node.args[1].value) is str
    )


def _twice(nodes: list[Any]) -> bool:
    """Whether call arguments may be written in both branches of a method call: small, and
    holding nothing that was itself written twice (no conditional expression) or that
    defines code (lambdas, comprehensions), so the code grows linearly."""
    n = 0
    for top in nodes:
        for node in ast.walk(top):
            n += 1
            if n > SMALL_KEY or isinstance(
                node, (ast.IfExp, ast.NamedExpr, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
            ):
                return False
    return True


def _value_checked(obj: ast.expr, attr: str) -> ast.expr:
    """``obj.attr`` with the value check only: ``_t_ if _type_(_t_ := obj.attr) not in _suspect_ else _vet_(...)``."""
    read = ast.NamedExpr(target=_name("_t_", True), value=ast.Attribute(value=obj, attr=attr, ctx=ast.Load()))
    test = ast.Compare(left=_call("_type_", read), ops=[ast.NotIn()], comparators=[_name("_suspect_")])
    return ast.IfExp(test=test, body=_name("_t_"), orelse=_call("_vet_", _name("_t_"), ast.Constant(attr)))


def inline_attr(obj: ast.expr, attr: str) -> ast.expr:
    """``_attr_(obj, attr)`` as an inline check: the receiver's exact type, then the value's
    (for ``self``, most often the bot's own object, the value's alone)."""
    if isinstance(obj, ast.Name) and obj.id == "self":
        return _value_checked(obj, attr)
    grab = ast.NamedExpr(target=_name("_r_", True), value=obj)
    plain = ast.Compare(left=_call("_type_", grab), ops=[ast.In()], comparators=[_name("_plain_")])
    read = ast.NamedExpr(target=_name("_t_", True), value=ast.Attribute(value=_name("_r_"), attr=attr, ctx=ast.Load()))
    value_ok = ast.Compare(left=_call("_type_", read), ops=[ast.NotIn()], comparators=[_name("_suspect_")])
    checked = ast.IfExp(test=value_ok, body=_name("_t_"), orelse=_call("_vet_", _name("_t_"), ast.Constant(attr)))
    return ast.IfExp(test=plain, body=ast.Attribute(value=_name("_r_"), attr=attr, ctx=ast.Load()), orelse=checked)


#: A subscript's key of at most this many nodes (and no subscript in it) is written twice.
SMALL_KEY = 64


def _small(key: ast.expr) -> bool:
    """Whether ``key`` may be written in both branches: small, and no subscript inside (so
    nested subscripts never multiply)."""
    n = 0
    for node in ast.walk(key):
        n += 1
        if n > SMALL_KEY or isinstance(
            node, (ast.Subscript, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        ):
            return False
    return True


def inline_getitem(obj: ast.expr, key: ast.expr) -> ast.expr:
    """``_getitem_(obj, key)`` with the common case inline. A small key is written in both
    branches (only one runs): ``_o_[K] if _type_(_o_ := X) is not _mp_ else _getitem_(_o_, K)``;
    any other appears once, through :class:`.guards.KeyGuard` for a read-only mapping."""
    grab = ast.NamedExpr(target=_name("_o_", True), value=obj)
    test = ast.Compare(left=_call("_type_", grab), ops=[ast.IsNot()], comparators=[_name("_mp_")])
    if _small(key):
        plain = ast.Subscript(value=_name("_o_"), slice=key, ctx=ast.Load())
        return ast.IfExp(test=test, body=plain, orelse=_call("_getitem_", _name("_o_"), copy.deepcopy(key)))
    target = ast.IfExp(test=test, body=_name("_o_"), orelse=_call("_keyguard_", _name("_o_")))
    return ast.Subscript(value=target, slice=key, ctx=ast.Load())


def inline_percent(operand: ast.expr) -> ast.expr:
    """``_pm_(R)`` (the right operand of ``%``) with its common case inline."""
    grab = ast.NamedExpr(target=_name("_b_", True), value=operand)
    test = ast.Compare(left=_call("_type_", grab), ops=[ast.IsNot()], comparators=[_name("_mp_")])
    return ast.IfExp(test=test, body=_name("_b_"), orelse=_call("_pm_", _name("_b_")))


def inline_write(obj: ast.expr) -> ast.expr:
    """``_write_(obj)`` with the guard's own test inline."""
    grab = ast.NamedExpr(target=_name("_w_", True), value=obj)
    test = ast.BoolOp(
        op=ast.Or(),
        values=[
            ast.Compare(left=_call("_type_", grab), ops=[ast.In()], comparators=[_name("_writable_")]),
            ast.Compare(left=_call("_type_", _name("_w_")), ops=[ast.In()], comparators=[_name("_classes_")]),
        ],
    )
    return ast.IfExp(test=test, body=_name("_w_"), orelse=_call("_write_", _name("_w_")))


#: Builtins that only iterate or measure their one positional argument (in C, or our ``reversed``).
CONSUMING_BUILTINS = frozenset(
    {"len", "list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "any", "all", "enumerate", "reversed"}
)
#: Number constants: an operator with one of them on one side consumes the other side.
_NUMBERS = (int, float, complex)


def bound_names(tree: ast.AST) -> set[str]:
    """Every name the module binds anywhere, in any scope (so a name not in it is the builtin)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


def _constant(node: ast.AST) -> bool:
    """A constant, or a tuple/list/set display of constants (its items' comparisons are C)."""
    if isinstance(node, ast.Constant):
        return True
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and all(isinstance(e, ast.Constant) for e in node.elts)


def _number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in _NUMBERS


class Inline(ast.NodeTransformer):
    """Rewrites the remaining guard calls (see the module's docstring) where a named
    expression is allowed; keeps them as calls elsewhere; and makes plain the reads whose
    value never reaches the bot."""

    def __init__(self, tree: ast.AST | None = None) -> None:
        super().__init__()
        self.scopes: list[str] = ["module"]  # "module", "function", "class", "comp"
        self.blocked = 0  # > 0: in an annotation or a comprehension's iterable
        self.inlined = 0
        self.plain = 0
        shadowed = bound_names(tree) if tree is not None else set(CONSUMING_BUILTINS)
        self.builtins = CONSUMING_BUILTINS - shadowed

    # -- reads whose value is consumed on the spot ---------------------------------------

    def _consumed(self, node: Any) -> Any:
        """``node`` where its value is consumed by the interpreter: an ``_attr_`` read there
        needs no value check (its receiver is visited as usual)."""
        if _is_guard(node, "_attr_", 2) and isinstance(node.args[1], ast.Constant) and type(node.args[1].value) is str:
            self.plain += 1
            read = ast.Attribute(value=self.visit(node.args[0]), attr=node.args[1].value, ctx=ast.Load())
            return ast.copy_location(read, node)
        return self.visit(node)

    def _test(self, node: Any) -> Any:
        """``node`` in a truth test (``and``/``or``/``not`` inside it are truth tests too)."""
        if isinstance(node, ast.BoolOp):
            node.values = [self._test(v) for v in node.values]
            return node
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            node.operand = self._test(node.operand)
            return node
        return self._consumed(node)

    def visit_Compare(self, node: ast.Compare) -> Any:
        if len(node.ops) == 1:
            left, right = node.left, node.comparators[0]
            if _constant(right):
                node.left = self._consumed(left)
                return node
            if _constant(left):
                node.comparators = [self._consumed(right)]
                return node
        self.generic_visit(node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        if _number(node.right):
            node.left = self._consumed(node.left)
            return node
        if _number(node.left):
            node.right = self._consumed(node.right)
            return node
        self.generic_visit(node)
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        node.operand = self._test(node.operand) if isinstance(node.op, ast.Not) else self._consumed(node.operand)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        node.value = self._consumed(node.value)
        node.slice = self.visit(node.slice)
        return node

    def visit_If(self, node: ast.If) -> Any:
        node.test = self._test(node.test)
        node.body = [self.visit(n) for n in node.body]
        node.orelse = [self.visit(n) for n in node.orelse]
        return node

    visit_While = visit_If  # type: ignore[assignment]

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        node.test = self._test(node.test)
        node.body = self.visit(node.body)
        node.orelse = self.visit(node.orelse)
        return node

    def visit_Assert(self, node: ast.Assert) -> Any:
        node.test = self._test(node.test)
        if node.msg is not None:
            node.msg = self.visit(node.msg)
        return node

    def visit_For(self, node: ast.For) -> Any:
        node.iter = self._consumed(node.iter)
        node.target = self.visit(node.target)
        node.body = [self.visit(n) for n in node.body]
        node.orelse = [self.visit(n) for n in node.orelse]
        return node

    # -- where a named expression may stand ---------------------------------------------

    def _allowed(self) -> bool:
        if self.blocked:
            return False
        for kind in reversed(self.scopes):
            if kind != "comp":
                return kind != "class"
        return True  # pragma: no cover - the module scope is always at the bottom

    def _in(self, kind: str, nodes: list[Any]) -> list[Any]:
        self.scopes.append(kind)
        try:
            return [self.visit(n) for n in nodes]
        finally:
            self.scopes.pop()

    def _blocked(self, node: Any) -> Any:
        if node is None:
            return None
        self.blocked += 1
        try:
            return self.visit(node)
        finally:
            self.blocked -= 1

    def _arguments(self, args: ast.arguments) -> None:
        """Defaults run in the enclosing scope; annotations are not touched."""
        args.defaults = [self.visit(d) for d in args.defaults]
        args.kw_defaults = [None if d is None else self.visit(d) for d in args.kw_defaults]
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if a is not None and a.annotation is not None:
                a.annotation = self._blocked(a.annotation)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        self._arguments(node.args)
        node.returns = self._blocked(node.returns)
        node.body = self._in("function", node.body)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]  # refused earlier; same rules

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        self._arguments(node.args)
        node.body = self._in("function", [node.body])[0]
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        node.body = self._in("class", node.body)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        node.annotation = self._blocked(node.annotation)
        node.target = self.visit(node.target)
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def _comprehension(self, node: Any, parts: list[str]) -> Any:
        for gen in node.generators:
            self.blocked += 1
            try:
                gen.iter = self._consumed(gen.iter)
            finally:
                self.blocked -= 1
        self.scopes.append("comp")
        try:
            for gen in node.generators:
                gen.target = self.visit(gen.target)
                gen.ifs = [self._test(i) for i in gen.ifs]
            for part in parts:
                setattr(node, part, self.visit(getattr(node, part)))
        finally:
            self.scopes.pop()
        return node

    def visit_ListComp(self, node: ast.ListComp) -> Any:
        return self._comprehension(node, ["elt"])

    visit_SetComp = visit_ListComp  # type: ignore[assignment]
    visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_DictComp(self, node: ast.DictComp) -> Any:
        return self._comprehension(node, ["key", "value"])

    # -- the rewrites -------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> Any:
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in self.builtins
            and len(node.args) == 1
            and not isinstance(node.args[0], ast.Starred)
        ):
            # keywords (key=, default=, start=, reverse=) are the bot's own values, visited as usual
            node.args = [self._consumed(node.args[0])]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        if _is_plain_read(node.func) and self._allowed():
            return self._method_call(node)
        if _is_guard(node, "_write_", 1) or _is_guard(node, "_getitem_", 2):
            node.args = [self._consumed(node.args[0]), *[self.visit(a) for a in node.args[1:]]]
        else:
            self.generic_visit(node)
        if not self._allowed():
            return node
        new: ast.expr | None = None
        if _is_guard(node, "_attr_", 2) and isinstance(node.args[1], ast.Constant) and type(node.args[1].value) is str:
            new = inline_attr(node.args[0], node.args[1].value)
        elif _is_guard(node, "_getitem_", 2):
            new = inline_getitem(node.args[0], node.args[1])
        elif _is_guard(node, "_write_", 1):
            new = inline_write(node.args[0])
        elif _is_guard(node, "_pm_", 1):
            new = inline_percent(node.args[0])
        if new is None:
            return node
        self.inlined += 1
        return ast.copy_location(new, node)

    def _method_call(self, node: ast.Call) -> ast.expr:
        """``X.n(ARGS)`` as ``_r_.n(ARGS) if _type_(_r_ := X) in _plain_ else <checked _r_.n>(ARGS)``:
        on a plain receiver the method is looked up and called without a bound method
        object (``LOAD_METHOD``). Only when ``ARGS`` may be written twice (see :func:`_twice`);
        otherwise the read is inlined as any other and called."""
        func = node.func
        assert isinstance(func, ast.Call)
        receiver = self.visit(func.args[0])
        name = func.args[1].value  # type: ignore[attr-defined]
        args = [self.visit(a) for a in node.args]
        keywords = [self.visit(k) for k in node.keywords]
        self.inlined += 1
        if not _twice([*args, *keywords]):
            node.func = ast.copy_location(inline_attr(receiver, name), func)
            node.args, node.keywords = args, keywords
            return node
        grab = ast.NamedExpr(target=_name("_r_", True), value=receiver)
        plain = ast.Compare(left=_call("_type_", grab), ops=[ast.In()], comparators=[_name("_plain_")])
        fast = ast.Call(func=ast.Attribute(value=_name("_r_"), attr=name, ctx=ast.Load()), args=args, keywords=keywords)
        checked = ast.Call(
            func=_value_checked(_name("_r_"), name), args=copy.deepcopy(args), keywords=copy.deepcopy(keywords)
        )
        return ast.copy_location(ast.IfExp(test=plain, body=fast, orelse=checked), node)
