"""What the standard library's code generators may compile: the shapes ``dataclasses`` and
``collections.namedtuple`` write themselves, and nothing else.

A name the generator pastes can change between the moment anything checks it and the moment it is
formatted into the source (a ``str`` subclass whose ``__str__`` renames the field back, a ``Field`` renamed
by a method called with the field as ``self``), so the source about to be compiled is what is checked
(``generated_code_problem``). It may hold only:

- the node kinds the generators write (functions, assignments to attributes, returns, ``if``/``raise``,
  comparisons, ``and``/``or``/``not``, ``+``, conditional expressions, f-strings, tuple, list and set
  displays, constants and one ``lambda`` for ``namedtuple``): no comprehension, subscript, dict, walrus or
  starred argument;
- names that are a parameter or a function defined in the source, or one of the few globals the
  generators call (``hash``, ``type``, ``super``, ``_tuple_new``, ``NotImplemented``);
- ``+`` only as a repr's ``self.__class__.__qualname__ + f"..."`` (no string joined from pieces);
- calls in the generators' own shapes: ``hash(x)``, ``type(self)``, ``super()``/``super(cls, self)``,
  ``_tuple_new(cls, (...))``, a parameter (a default factory, ``FrozenInstanceError``), and
  ``__setattr__``/``__delattr__`` on ``object`` or ``super()``, ``__post_init__`` on ``self``;
- dunder names only among those the generators write, ``__class__`` only on a name, ``__qualname__`` only
  on ``x.__class__``, and no string constant shaped like a dunder name.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

__all__ = ["make_generated_code_check"]

_NODES = frozenset({
    ast.Module, ast.Expr, ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.If, ast.Raise,
    ast.Pass, ast.Attribute, ast.Name, ast.Call, ast.Tuple, ast.Compare, ast.BoolOp, ast.BinOp, ast.IfExp,
    ast.Constant, ast.JoinedStr, ast.FormattedValue, ast.Lambda, ast.Load, ast.Store, ast.Add, ast.And, ast.Or,
    ast.Set, ast.List, ast.UnaryOp, ast.Not,  # displays and ``not`` other Python versions' generators may write
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn,
})
_GLOBALS = frozenset({"hash", "type", "super", "_tuple_new", "NotImplemented"})
_ARITY = {"hash": (1,), "type": (1,), "super": (0, 2), "_tuple_new": (2,)}
_DUNDERS = frozenset({
    "__class__", "__qualname__", "__create_fn__", "__setattr__", "__delattr__", "__post_init__", "__init__",
    "__repr__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__new__",
})


def _shape_checks() -> tuple[Callable[[object], bool], Callable[[object], bool],
                              Callable[[ast.Call, set[str]], str], Callable[[ast.Attribute], str]]:
    """The checks of names, calls and attributes ``make_generated_code_check`` uses, bound in closures."""
    dunders, arity = _DUNDERS, _ARITY
    name_t, attr_t, call_t = ast.Name, ast.Attribute, ast.Call
    type_, str_ = type, str

    def dunder_shaped(text: object) -> bool:
        return (type_(text) is str_ and len(str_(text)) > 4 and str_.startswith(str_(text), "__")
                and str_.endswith(str_(text), "__"))

    def dunder(text: object) -> bool:
        """A dunder name the generators do not write."""
        return dunder_shaped(text) and text not in dunders and not str_.startswith(str_(text), "__dataclass_")

    def call_problem(node: ast.Call, local: set[str]) -> str:
        func, count = node.func, len(node.args)
        if node.keywords:
            return "a call with keywords"
        if isinstance(func, name_t):
            if func.id in arity and func.id not in local:
                if count not in arity[func.id]:
                    return f"{func.id}() with {count} arguments"
                plain_args = all(isinstance(arg, name_t) for arg in node.args)
                return "" if plain_args or func.id not in ("type", "super") else f"{func.id}() of an expression"
            return "" if func.id in local else f"a call of {func.id}"
        if isinstance(func, attr_t) and func.attr in ("__setattr__", "__delattr__"):
            base = func.value
            if (isinstance(base, name_t) and base.id == "__dataclass_builtins_object__") or (
                    isinstance(base, call_t) and isinstance(base.func, name_t) and base.func.id == "super"):
                return ""
        if isinstance(func, attr_t) and func.attr == "__post_init__" and isinstance(func.value, name_t):
            return ""
        return "a call outside the generator's shapes"

    def attribute_problem(node: ast.Attribute) -> str:
        attr, base = node.attr, node.value
        if dunder(attr) or (attr == "__class__" and not isinstance(base, name_t)) or (
                attr == "__qualname__" and not (isinstance(base, attr_t) and base.attr == "__class__")):
            return f"the attribute {attr!r}"
        return ""

    return dunder_shaped, dunder, call_problem, attribute_problem


def make_generated_code_check() -> Callable[[str | bytes], str]:
    """The check, with everything it consults bound in its closure (it reads no module global when called,
    so code that reached this module's dict could not switch it off).

    Returns:
      A function of the source a generator is about to compile answering what in it the generators never
      write (``""`` when nothing).
    """
    parse, walk, nodes, globals_ = ast.parse, ast.walk, _NODES, _GLOBALS
    name_t, call_t, const_t, arg_t, def_t, attr_t = ast.Name, ast.Call, ast.Constant, ast.arg, ast.FunctionDef, ast.Attribute
    binop_t, joined_t, type_ = ast.BinOp, ast.JoinedStr, type
    dunder_shaped, dunder, call_problem, attribute_problem = _shape_checks()

    def node_problem(node: ast.AST, local: set[str]) -> str:
        if type_(node) not in nodes:
            return f"a {type_(node).__name__}"
        if isinstance(node, name_t) and node.id not in local and node.id not in globals_:
            return f"the name {node.id!r}"
        if isinstance(node, call_t):
            return call_problem(node, local)
        if isinstance(node, const_t) and dunder_shaped(node.value):
            return f"the string {node.value!r}"
        if isinstance(node, attr_t):
            return attribute_problem(node)
        if isinstance(node, binop_t) and not (  # only ``self.__class__.__qualname__ + f"(...)"`` (a repr)
                isinstance(node.right, joined_t) and isinstance(node.left, attr_t) and node.left.attr == "__qualname__"):
            return "a + outside a repr"
        defined = node.arg if isinstance(node, arg_t) else node.name if isinstance(node, def_t) else (
            node.id if isinstance(node, name_t) else "")
        return f"the name {defined!r}" if dunder(defined) else ""

    def check(source: str | bytes) -> str:
        try:
            tree = parse(source)
        except (SyntaxError, ValueError) as e:
            return f"source that does not parse ({type_(e).__name__})"
        found = list(walk(tree))
        local = {n.arg for n in found if isinstance(n, arg_t)} | {n.name for n in found if isinstance(n, def_t)}
        for node in found:
            why = node_problem(node, local)
            if why:
                return why
        return ""

    return check
