"""Layer 1, load time: the syntax-tree passes around RestrictedPython's transformer.

Three passes, in this order, on a tree that :func:`arena.trust.botsource.parse_source`
has already bounded in size and depth:

1. :class:`AugmentedAssignment` rewrites ``a.b += c`` / ``a[k] += c`` (which
   RestrictedPython refuses outright) as ``a.b = a.b + c``, so the ordinary
   guards apply to both halves.
2. :class:`BotPolicy`, RestrictedPython's :class:`RestrictingNodeTransformer`
   plus ``super().__init__``: every static refusal (``_`` names and attributes,
   frame/code attributes, ``exec``/``eval``, ``try/except*``...) happens here
   and turns each attribute read, subscript, iteration, unpacking and in-place
   operation into a guard call.
3. :class:`Unguard`, run only when pass 2 refused nothing: it takes back the
   guard calls whose answer is already decided by the source text, each
   replaced by exactly what the guard would have done (see its docstring for
   the list and the argument for each). What depends on live objects stays a
   run-time guard.
4. :class:`.inline.Inline`: the run-time checks left (attribute values, computed
   subscripts, writes) are written into the code for their common case, the
   guard called only when that does not decide.
"""

from __future__ import annotations

import ast
from typing import Any

from RestrictedPython.transformer import RestrictingNodeTransformer

from .formatting import FORMAT_NAMES, check_percent_template, check_template
from .inline import Inline

__all__ = ["AugmentedAssignment", "BotPolicy", "GuardCalls", "Unguard", "CLOSER_LOOK", "PLAIN_ATTR_GUARD"]

#: Attribute names whose reads keep the full ``_getattr_`` guard (format back door, ``mro``...).
CLOSER_LOOK = FORMAT_NAMES | frozenset({"mro", "obj", "register", "Formatter", "get_field", "get_value", "vformat"})

#: The guard a statically plain ``a.name`` read calls instead (value checks only).
PLAIN_ATTR_GUARD = "_attr_"

_IOPS: dict[str, type[ast.operator]] = {
    "+=": ast.Add,
    "-=": ast.Sub,
    "*=": ast.Mult,
    "/=": ast.Div,
    "//=": ast.FloorDiv,
    "%=": ast.Mod,
    "**=": ast.Pow,
    "<<=": ast.LShift,
    ">>=": ast.RShift,
    "|=": ast.BitOr,
    "&=": ast.BitAnd,
    "^=": ast.BitXor,
    "@=": ast.MatMult,
}


class AugmentedAssignment(ast.NodeTransformer):
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
    ``super`` only), checked again at run time to really be a ``super`` object; and, once the
    whole module passed, the :class:`Unguard` pass and (``inline``) the :class:`.inline.Inline` pass."""

    #: Whether the guards left are written into the code (pass 4); see :class:`GuardCalls`.
    inline = True

    def visit_Module(self, node: ast.Module) -> Any:
        tree = super().visit_Module(node)
        if self.errors or not isinstance(tree, ast.Module):
            return tree
        unguard = Unguard()
        tree = ast.fix_missing_locations(unguard.visit(tree))
        self.errors.extend(unguard.errors)
        if self.inline and not self.errors:
            tree = ast.fix_missing_locations(Inline(tree).visit(tree))
        return tree

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


class GuardCalls(BotPolicy):
    """The same policy with the guards left as calls (no pass 4): the fallback should the
    compiler refuse an inlined tree, and the reference the tests compare with."""

    inline = False


def _guard_call(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is a call of the guard ``name`` (bot code cannot name ``_`` names, so
    every such call was written by RestrictedPython)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _never_underscore_str(index: ast.expr) -> bool:
    """Whether a subscript's index, read from the source alone, can never be a ``str`` that
    starts with ``_`` (the one thing ``_getitem_`` refuses)."""
    if isinstance(index, ast.Constant):
        return not (isinstance(index.value, str) and index.value.startswith("_"))
    if isinstance(index, ast.Slice):
        return True  # evaluates to a slice object
    if isinstance(index, ast.UnaryOp) and isinstance(index.operand, ast.Constant):
        return not isinstance(index.operand.value, str)  # -1: a number (or a TypeError)
    if isinstance(index, ast.Tuple):
        return True  # evaluates to a tuple, whatever its items
    return False


class Unguard(ast.NodeTransformer):
    """Takes back the guard calls that the source text alone decides (pass 3).

    Each rewrite gives exactly what the guard would have done at run time:

    * ``_getitem_(x, i)`` -> ``x[i]`` when ``i`` can never be a ``str`` starting with ``_``
      (a constant, a negative number, a slice, a tuple): the guard refuses only such keys;
    * ``_getattr_(x, "name")`` -> ``_attr_(x, "name")`` when ``name`` is not one of
      :data:`CLOSER_LOOK`: ``_`` and frame/code names were refused by pass 2, so only the
      checks on the value (a foreign module, ``str.format`` under another name) remain;
    * ``for t in _getiter_(e)`` / ``_iter_unpack_sequence_(e, ...)`` -> ``for t in e``,
      ``t = _unpack_sequence_(e, ...)`` -> ``t = e``, ``n = _inplacevar_("+=", n, v)`` -> ``n += v``
      and ``_apply_(f, *a, **k)`` -> ``f(*a, **k)``: those guards check nothing (iterating,
      unpacking, arithmetic and calling reach no attribute by name), so the plain
      operation is the same operation.

    * ``L % R`` (and ``n %= R``): ``%`` reads mapping keys by name (``"%(_k)s" % m``), so a
      literal template's keys are checked here (a ``_`` key is a load error) and need
      nothing at run time; with a computed template ``R`` becomes ``_pm_(R)``, which gives a
      read-only mapping without its ``_`` keys (a number, string or tuple ``R`` is left).

    * ``"...".format`` / ``"...".format_map`` on a string *literal*: the template is known, so
      it is checked here (:func:`.formatting.check_template`: plain fields only; refused at
      load time otherwise) and the call is ``str.format`` itself, which is what the run-time
      road gives for a checked template.

    What is left runs at run time: attribute reads (their value), writes (the object's type),
    subscripts with a computed index, and the ``getattr``/``setattr`` builtins (a computed name).
    """

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[str] = []

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        if (
            _guard_call(node, "_getattr_")
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and type(node.args[0].value) is str
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in FORMAT_NAMES
        ):
            try:
                check_template(node.args[0].value)
            except ValueError as exc:
                self.errors.append(f"Line {getattr(node, 'lineno', 0)}: {exc}")
                return node
            attr = ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load())
            return ast.copy_location(attr, node)
        if _guard_call(node, "_getitem_") and len(node.args) == 2 and _never_underscore_str(node.args[1]):
            sub = ast.Subscript(value=node.args[0], slice=node.args[1], ctx=ast.Load())
            return ast.copy_location(sub, node)
        if (
            _guard_call(node, "_getattr_")
            and len(node.args) == 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value not in CLOSER_LOOK
        ):
            func = ast.copy_location(ast.Name(PLAIN_ATTR_GUARD, ast.Load()), node.func)
            return ast.copy_location(ast.Call(func=func, args=node.args, keywords=[]), node)
        if _guard_call(node, "_apply_") and node.args and not isinstance(node.args[0], ast.Starred):
            call = ast.Call(func=node.args[0], args=node.args[1:], keywords=node.keywords)
            return ast.copy_location(call, node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        """``template % operand``: a literal template's keys are checked here; otherwise a
        read-only mapping operand loses its ``_`` keys at run time (``_pm_``)."""
        self.generic_visit(node)
        if isinstance(node.op, ast.Mod):
            node.right = self._percent_operand(node.left, node.right, node)
        return node

    def _percent_operand(self, left: ast.expr, right: ast.expr, where: ast.AST) -> ast.expr:
        if isinstance(right, ast.Constant) or (
            isinstance(right, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in right.elts)
        ):
            return right  # a number, a string, a tuple of values: no mapping to read keys from
        if isinstance(left, ast.Constant) and isinstance(left.value, (str, bytes)):
            try:
                if not check_percent_template(left.value):
                    return right  # a literal template without %(key): reads no key
            except ValueError as exc:
                self.errors.append(f"Line {getattr(where, 'lineno', 0)}: {exc}")
            return right  # its keys are known and none starts with "_"
        if isinstance(left, ast.Constant):
            return right  # a number: no template
        return ast.copy_location(ast.Call(func=ast.Name("_pm_", ast.Load()), args=[right], keywords=[]), right)

    def _plain_iter(self, node: ast.For | ast.comprehension) -> None:
        it = node.iter
        if _guard_call(it, "_getiter_") and isinstance(it, ast.Call) and len(it.args) == 1:
            node.iter = it.args[0]
        elif (
            _guard_call(it, "_iter_unpack_sequence_")
            and isinstance(it, ast.Call)
            and isinstance(node.target, ast.Tuple)
        ):
            node.iter = it.args[0]

    def visit_For(self, node: ast.For) -> Any:
        self.generic_visit(node)
        self._plain_iter(node)
        return node

    def visit_comprehension(self, node: ast.comprehension) -> Any:
        self.generic_visit(node)
        self._plain_iter(node)
        return node

    def visit_Assign(self, node: ast.Assign) -> Any:
        self.generic_visit(node)
        value = node.value
        if (
            len(node.targets) == 1
            and isinstance(node.targets[0], ast.Tuple)
            and _guard_call(value, "_unpack_sequence_")
            and isinstance(value, ast.Call)
        ):
            node.value = value.args[0]
            return node
        if (
            len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _guard_call(value, "_inplacevar_")
            and isinstance(value, ast.Call)
            and len(value.args) == 3
            and isinstance(value.args[0], ast.Constant)
            and value.args[0].value in _IOPS
            and isinstance(value.args[1], ast.Name)
            and value.args[1].id == node.targets[0].id
        ):
            target = ast.Name(node.targets[0].id, ast.Store())
            operand = value.args[2]
            if value.args[0].value == "%=":
                operand = self._percent_operand(value.args[1], operand, node)
            aug = ast.AugAssign(target=target, op=_IOPS[value.args[0].value](), value=operand)
            return ast.copy_location(aug, node)
        return node


def _pure(node: ast.AST) -> bool:
    """A chain of names and attributes (``self``, ``self.stats``): safe to evaluate twice."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, (ast.Name, ast.Constant))


def _as_load(node: ast.expr) -> ast.expr:
    copy = ast.parse(ast.unparse(node), mode="eval").body
    return ast.copy_location(copy, node)
