"""The static gate's walk over a module's syntax tree: the first place where the source breaks a rule.

The rules themselves, their ids and their messages, are ``cwm.sandbox.gate.RULES``; this walk raises
``Refusal(rule, line, fields)`` and the gate turns it into the error. docs/security.md explains each rule.
"""

from __future__ import annotations

import ast
import re

from cwm.sandbox.names import (
    ALLOWED_DUNDER_DEFINITIONS,
    ALLOWED_DUNDER_NAMES,
    ALLOWED_DUNDER_STRINGS,
    CLASS_FACTORIES,
    FACTORY_NAME_KEYWORDS,
    FORBIDDEN_NAMES,
    FORMAT_METHODS,
    GLOBAL_RANDOM_FUNCTIONS,
    NUMPY_GLOBAL_RANDOM_FUNCTIONS,
    PYTHON_POLICY,
    SEEDED_CONSTRUCTORS,
    SELF_MATCHING_CLASSES,
    SELF_NAMES,
    UNCATCHABLE_NAMES,
    ImportPolicy,
    attribute_problem,
    plain_name,
    template_problem,
)

_DUNDER_STRING = re.compile(r"^__\w+__$")


# Methods of the builtin containers that change the object in place: called unbound (``list.append(x, v)``)
# they work on a read-only state's storage directly, past its refusals.
BUILTIN_MUTATORS: dict[str, frozenset[str]] = {
    "list": frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"}),
    "dict": frozenset({"update", "setdefault", "pop", "popitem", "clear"}),
}


class Refusal(Exception):
    """The rule a node breaks, its line and the fields of the rule's message."""

    def __init__(self, rule: str, line: object, fields: dict[str, object]):
        super().__init__(rule)
        self.rule, self.line, self.fields = rule, line, fields


def _fail(node: ast.AST, rule: str, **fields: object) -> None:
    raise Refusal(rule, getattr(node, "lineno", "?"), fields)


class Walk(ast.NodeVisitor):
    """Walks the tree once, remembering which local names are bound to the random modules and which
    function scopes are methods (whose first parameter, ``self``/``cls``, may use private attributes)."""

    def __init__(self, policy: ImportPolicy = PYTHON_POLICY) -> None:
        self.policy = policy
        self.random_aliases: set[str] = set()
        self.numpy_aliases: set[str] = set()
        self.np_random_aliases: set[str] = set()
        self.methods: set[int] = set()  # ids of the defs written directly in a class body
        self.scopes: list[str | None] = []  # per enclosing function: its self/cls parameter, if a method
        # ids of the ``type`` / ``str.format`` / class-factory nodes used where they are allowed
        self.allowed_calls: set[int] = set()

    # -- imports -----------------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            _check_module(node, alias.name, self.policy)
            bound = alias.asname or alias.name.split(".")[0]
            if alias.name == "random":
                self.random_aliases.add(bound)
            elif alias.name == "numpy":
                self.numpy_aliases.add(bound)
            elif alias.name == "numpy.random":
                (self.np_random_aliases if alias.asname else self.numpy_aliases).add(bound)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            _fail(node, "import-relative")
        _check_module(node, node.module or "", self.policy, names=[a.name for a in node.names])
        for alias in node.names:
            name = alias.name
            if name == "*":
                _fail(node, "import-star", module=node.module)
            _check_attribute(node, name, exempt=False, extra=self.policy.forbidden_attributes)
            if node.module == "random" and name in GLOBAL_RANDOM_FUNCTIONS:
                _fail(node, "global-random", name=name, call="")
            if node.module == "numpy.random" and name in NUMPY_GLOBAL_RANDOM_FUNCTIONS:
                _fail(node, "global-numpy-random", name=name, call="")
            if node.module == "numpy" and name == "random":
                self.np_random_aliases.add(alias.asname or name)
        self.generic_visit(node)

    # -- names and bindings ------------------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES:
            _fail(node, "forbidden-name", name=node.id)
        if node.id in UNCATCHABLE_NAMES:
            _fail(node, "uncatchable-name", name=node.id)
        if node.id == "type" and isinstance(node.ctx, ast.Load) and id(node) not in self.allowed_calls:
            _fail(node, "type-call")
        if isinstance(node.ctx, ast.Load) and _is_dunder(node.id) and node.id not in ALLOWED_DUNDER_NAMES:
            _fail(node, "dunder-name", name=node.id)
        if node.id in CLASS_FACTORIES and isinstance(node.ctx, ast.Load) and id(node) not in self.allowed_calls:
            _fail(node, "class-factory-value", name=node.id)
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._bind(node, node.id)

    def visit_alias(self, node: ast.alias) -> None:
        self._bind(node, (node.asname or node.name).split(".")[0])

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self._bind(node, name)

    visit_Nonlocal = visit_Global  # type: ignore[assignment]

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self._bind(node, node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        self._bind(node, node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self._bind(node, node.rest)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is None:
            _fail(node, "bare-except")
        self._bind(node, node.name)
        self.generic_visit(node)

    # -- scopes: only a method's first parameter may be self/cls, and only there is it exempt ----------

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg is not None and _is_dunder(node.arg):  # ``dict(__annotations__=...)`` names one unseen
            _fail(node, "dunder-name", name=node.arg)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node, node.name)
        self._allow_factories(node.bases)  # ``class P(NamedTuple)``: the names are the body's own
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not any(
                    isinstance(d, ast.Name) and d.id == "staticmethod" for d in stmt.decorator_list):
                self.methods.add(id(stmt))
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._bind(node, node.name)
        if node.returns:
            self._allow_in_annotation(node.returns)
        for part in [*node.decorator_list, *([node.returns] if node.returns else [])]:
            self.visit(part)  # evaluated in the enclosing scope
        first = [*node.args.posonlyargs, *node.args.args][:1]
        own = first[0].arg if id(node) in self.methods and first and first[0].arg in SELF_NAMES else None
        self._visit_arguments(node.args, own)
        self._visit_scope(node.body, own)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_arguments(node.args, None)
        self._visit_scope([node.body], None)

    def _visit_arguments(self, args: ast.arguments, own: str | None) -> None:
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.visit(default)
        for arg in [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]:
            if arg is None:
                continue
            if arg.annotation is not None:
                self._allow_in_annotation(arg.annotation)
                self.visit(arg.annotation)
            if not (own is not None and arg.arg == own):
                self._bind(arg, arg.arg)
            own = None  # only the first parameter

    def _visit_scope(self, body: list[ast.stmt] | list[ast.expr], own: str | None) -> None:
        self.scopes.append(own)
        for stmt in body:
            self.visit(stmt)
        self.scopes.pop()

    def _bind(self, node: ast.AST, name: str | None) -> None:
        """A name bound here (assigned, imported, a parameter, a def or class); the method's own first
        parameter is not passed here."""
        if name in SELF_NAMES and any(self.scopes):
            _fail(node, "self-binding", name=name)
        _check_definition(node, name)

    def _exempt(self, base: ast.expr) -> bool:
        """Whether ``base`` is a method's self/cls. Nothing inside a method may bind these names again
        (``self-binding``), so there (and in the functions nested in it) they mean its first parameter."""
        return isinstance(base, ast.Name) and base.id in SELF_NAMES and base.id in self.scopes

    # -- attributes, patterns, calls and constants -------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        exempt = self._exempt(node.value)
        _check_attribute(node, node.attr, exempt=exempt, extra=self.policy.forbidden_attributes)
        if isinstance(node.value, ast.Name) and node.attr in BUILTIN_MUTATORS.get(node.value.id, ()):
            _fail(node, "builtin-mutator", name=node.value.id, attr=node.attr)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and not exempt:
            _fail(node, "attribute-assignment", attr=node.attr)
        if node.attr in CLASS_FACTORIES and isinstance(node.ctx, ast.Load) and id(node) not in self.allowed_calls:
            _fail(node, "class-factory-value", name=node.attr)
        if node.attr in FORMAT_METHODS and id(node) not in self.allowed_calls and not (
                isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            _fail(node, "format-receiver", attr=node.attr)
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:  # ``case object(__class__=c)`` reads an attribute without a dot
            _check_attribute(node, attr, exempt=False, extra=self.policy.forbidden_attributes)
        # ``case C(x)`` reads the attribute named in C.__match_args__ from any subject C accepts (and C's
        # metaclass or ABC registry decides what it accepts): an attribute read the gate cannot see.
        if node.patterns and not (isinstance(node.cls, ast.Name) and node.cls.id in SELF_MATCHING_CLASSES):
            _fail(node, "class-pattern", allowed=", ".join(sorted(SELF_MATCHING_CLASSES)))
        self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> None:
        for stmt in node.finalbody:  # ``finally: continue`` (or break/return) discards any exception
            for sub in ast.walk(stmt):
                if isinstance(sub, (ast.Return, ast.Break, ast.Continue)):
                    _fail(sub, "finally-jump")
        if node.finalbody:  # a generator collected while suspended here runs 'finally' where errors are dropped
            guarded: list[ast.AST] = [*node.body, *node.handlers, *node.orelse]
            for part in guarded:
                for sub in ast.walk(part):
                    if isinstance(sub, (ast.Yield, ast.YieldFrom, ast.Await)):
                        _fail(sub, "finally-yield")
        self.generic_visit(node)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if self._is_random_module(func.value) and func.attr in GLOBAL_RANDOM_FUNCTIONS:
                _fail(node, "global-random", name=func.attr, call="()")
            if self._is_np_random(func.value) and func.attr in NUMPY_GLOBAL_RANDOM_FUNCTIONS:
                _fail(node, "global-numpy-random", name=func.attr, call="()")
            if (func.attr in FORMAT_METHODS and isinstance(func.value, ast.Name) and func.value.id == "str"
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                self.allowed_calls.add(id(func))  # str.format('literal', ...): the template is visible
            name = func.attr
        else:
            name = func.id if isinstance(func, ast.Name) else ""
        if isinstance(func, ast.Name) and name == "type" and len(node.args) == 1 and not node.keywords:
            self.allowed_calls.add(id(func))
        if _is_type_call(func) and (len(node.args) >= 3 or _unpacks(node)):
            _fail(node, "metaclass-call")
        if name in CLASS_FACTORIES:
            why = _factory_problem(node)
            if why:
                _fail(node, "class-from-names", factory=name, why=why)
            self.allowed_calls.add(id(func))
        if name in ("isinstance", "issubclass") and len(node.args) == 2:
            second = node.args[1]
            self._allow_factories(second.elts if isinstance(second, ast.Tuple) else [second])
        if name == "SystemRandom":
            _fail(node, "system-random")
        if name in SEEDED_CONSTRUCTORS and not node.args and not node.keywords:
            _fail(node, "unseeded-generator", name=name)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, str):
            return
        problem = template_problem(node.value)
        if problem:
            _fail(node, "format-template", problem=problem)
        if _DUNDER_STRING.match(node.value) and node.value not in ALLOWED_DUNDER_STRINGS:
            _fail(node, "dunder-string", text=node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._allow_in_annotation(node.annotation)
        self.generic_visit(node)

    def _allow_in_annotation(self, annotation: ast.expr) -> None:
        """A class factory named in an annotation (``def f(c: Enum)``) is only stored where no model code
        reads it back (``__annotations__`` is refused), so it is allowed there."""
        parts = list(ast.walk(annotation))
        if not any(isinstance(n, (ast.NamedExpr, ast.Lambda, ast.Call)) for n in parts):  # nothing binds it
            self._allow_factories([n for n in parts if isinstance(n, (ast.Name, ast.Attribute))])

    def _allow_factories(self, nodes: list[ast.expr]) -> None:
        """Marks the class factories among ``nodes`` (bases, isinstance classes) as used where allowed."""
        for node in nodes:
            if (isinstance(node, ast.Name) and node.id in CLASS_FACTORIES) or (
                    isinstance(node, ast.Attribute) and node.attr in CLASS_FACTORIES):
                self.allowed_calls.add(id(node))

    def _is_random_module(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.random_aliases

    def _is_np_random(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.np_random_aliases
        return (isinstance(node, ast.Attribute) and node.attr == "random" and isinstance(node.value, ast.Name)
                and node.value.id in self.numpy_aliases)


def _check_module(node: ast.AST, name: str, policy: ImportPolicy, *, names: list[str] | None = None) -> None:
    """An ``import name`` (``names``: the names of ``from name import ...``) under ``policy``: a module of the
    allow-list, a dotted name only among its submodules, and a module importable only through its submodules
    (``jax``) named only with one of them (``import jax.numpy``, ``from jax import numpy``)."""
    top = name.split(".")[0]
    if top not in policy.modules:
        _fail(node, "import", name=name, allowed=policy.allowed_text())
    if "." in name and name not in policy.submodules:
        _fail(node, "import-submodule", name=name)
    if name == top and top not in policy.bare and (
            names is None or any(f"{top}.{n}" not in policy.submodules for n in names)):
        _fail(node, "import", name=name, allowed=policy.allowed_text())


def _check_definition(node: ast.AST, name: str | None) -> None:
    if name is None:
        return
    if name in SELF_MATCHING_CLASSES:  # ``int = Probe`` would turn ``case int(x)`` back into an attribute read
        _fail(node, "builtin-rebinding", name=name)
    if name.startswith("__") and name.endswith("__") and name not in ALLOWED_DUNDER_DEFINITIONS:
        _fail(node, "dunder-definition", name=name)


def _check_attribute(node: ast.AST, attr: str, *, exempt: bool, extra: frozenset[str] = frozenset()) -> None:
    problem = attribute_problem(attr, exempt=exempt, extra=extra)
    if problem:
        _fail(node, problem, attr=attr)


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _is_type_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"


def _unpacks(node: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)


def _factory_problem(node: ast.Call) -> str:
    """Why a call of a class factory builds a class from names the gate cannot read (``""`` if it does not):
    its names argument (the second positional one, or ``field_names=``/``names=``/``fields=``) must be a
    literal string, list, tuple or dict of plain identifiers."""
    if _unpacks(node):
        return "arguments unpacked with * or **"
    given = [k.value for k in node.keywords if k.arg in FACTORY_NAME_KEYWORDS] + node.args[1:2]
    for value in given:
        names = _literal_names(value)
        if names is None:
            return "the names are not written out in the source"
        bad = [n for n in names if not plain_name(n)]
        if bad:
            return f"{bad[0]!r} is not a plain identifier"
    return ""


def _literal_names(node: ast.expr) -> list[str] | None:
    """The names a literal names argument gives (``"a b"``, ``["a", "b"]``, ``[("a", 1)]``, ``{"a": 1}``),
    or ``None`` when any of them is computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace(",", " ").split()
    if isinstance(node, ast.Dict):
        keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        return keys if len(keys) == len(node.keys) else None
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return None
    names: list[str] = []
    for item in node.elts:
        if isinstance(item, (ast.List, ast.Tuple)) and item.elts:
            item = item.elts[0]
        if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
            return None
        names.append(item.value)
    return names
