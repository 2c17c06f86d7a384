"""The sandbox's static gate: reject LLM-written source that reaches outside the game before it runs.

The gate is the first of several layers (see docs/security.md). It is deliberately strict about what a
game model has no reason to touch (the OS, the interpreter's internals, files, global randomness) and
names the line and the reason, so the synthesis loop can show the LLM what to change.
"""

from __future__ import annotations

import ast
import re

from cwm.types import ModelLoadError

MAX_SOURCE_CHARS = 1_000_000

ALLOWED_IMPORTS = frozenset({
    "math", "random", "itertools", "functools", "collections", "copy", "json", "re", "dataclasses", "typing",
    "enum", "heapq", "bisect", "string", "numpy",
})
# Dotted imports are allowed only for these submodules (the rest of numpy includes file I/O and ctypes).
ALLOWED_SUBMODULES = frozenset({"collections.abc", "numpy.random", "numpy.linalg"})

FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "__builtins__", "input",
    "breakpoint", "getattr", "setattr", "delattr", "memoryview", "exit", "quit", "help", "__loader__",
    "__spec__", "__build_class__", "copyright", "credits", "license",
})
# Attribute names refused on any object: modules that allowed modules re-export (``typing.sys``,
# ``enum.bltns`` is builtins, ``dataclasses.types``, ``json.codecs`` has ``open``), frame and code internals,
# numpy's file I/O and foreign-function entry points, process and environment access, and the library
# functions that turn strings into attribute walks or evaluated code (``string.Formatter().get_field``,
# ``typing.get_type_hints`` on string annotations), and what can swallow the time-budget interrupt
# (``typing.contextlib``'s ``ExitStack``/``suppress``, ``make_dataclass`` namespaces that add ``__del__``).
FORBIDDEN_ATTRIBUTES = frozenset({
    "sys", "os", "builtins", "bltns", "subprocess", "importlib", "ctypes", "socket", "signal", "threading",
    "gc", "inspect", "shutil", "pathlib", "io", "posix", "marshal", "pickle", "types", "codecs", "copyreg",
    "operator", "warnings", "ast", "stride_tricks", "npyio", "core", "extbuild",
    "Formatter", "get_field", "get_type_hints", "ForwardRef", "evaluate_forward_ref",
    "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace", "tb_frame", "tb_next", "gi_frame",
    "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "co_code", "co_consts",
    "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt", "fromfile", "tofile",
    "memmap", "fromregex", "DataSource", "ctypeslib", "lib", "f2py", "distutils", "testing", "dump",
    "system", "popen", "environ", "getenv", "putenv", "mro", "contextlib", "make_dataclass",
})
# Builtin classes whose positional ``case int(x)`` pattern binds the subject itself (no __match_args__).
SELF_MATCHING_CLASSES = frozenset({
    "int", "str", "float", "bool", "bytes", "list", "tuple", "dict", "set", "frozenset", "bytearray",
})
# The exceptions the sandbox and the in-process budget interrupt a runaway call with derive from
# BaseException; a model that names these (or catches everything) can swallow the interrupt forever.
UNCATCHABLE_NAMES = frozenset({"BaseException", "KeyboardInterrupt", "SystemExit", "GeneratorExit"})
# String constants a model may write that look like dunder names.
ALLOWED_DUNDER_STRINGS = frozenset({"__main__"})
_DUNDER_STRING = re.compile(r"^__\w+__$")
# Drawing from the process-wide generators makes a model non-deterministic; models take a seed instead.
GLOBAL_RANDOM_FUNCTIONS = frozenset({
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform", "gauss",
    "normalvariate", "lognormvariate", "expovariate", "betavariate", "gammavariate", "paretovariate",
    "weibullvariate", "vonmisesvariate", "triangular", "getrandbits", "randbytes", "seed", "setstate",
    "binomialvariate",
})
NUMPY_GLOBAL_RANDOM_FUNCTIONS = frozenset({
    "rand", "randn", "randint", "random", "random_sample", "ranf", "sample", "choice", "shuffle", "permutation",
    "seed", "set_state", "uniform", "normal", "integers", "bytes", "binomial", "poisson", "exponential",
    "standard_normal", "beta", "gamma", "multinomial", "dirichlet", "geometric",
})
SEEDED_CONSTRUCTORS = frozenset({
    "Random", "default_rng", "RandomState", "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64", "SeedSequence",
})
SELF_NAMES = frozenset({"self", "cls"})
# Dunder names a model may define (ordinary protocol methods). Others (``__getattr__``, ``__del__``,
# ``__reduce__``, ``__init_subclass__``, ``__dataclass_fields__``, ``__class__`` ...) change how the
# interpreter or the standard library treats an object, which is how attribute rules get walked around.
ALLOWED_DUNDER_DEFINITIONS = frozenset({
    "__init__", "__post_init__", "__repr__", "__str__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
    "__ge__", "__hash__", "__len__", "__iter__", "__next__", "__getitem__", "__setitem__", "__contains__",
    "__bool__", "__call__", "__add__", "__sub__", "__mul__", "__neg__", "__slots__", "__all__",
})
# A str.format template that walks attributes (``"{0.__class__}"``) reaches objects the gate hides.
_FORMAT_ESCAPE = re.compile(r"\{[^{}]*?[.\[]\s*_")


def static_gate(source: str) -> None:
    """Rejects source that does not parse, imports outside the allow-list, or names dangerous things.

    Rules: imports only from ``ALLOWED_IMPORTS`` (dotted ones from ``ALLOWED_SUBMODULES``); no
    ``FORBIDDEN_NAMES``; no dunder attributes (also not through ``match`` class patterns), no private
    attributes except on ``self``/``cls``, no ``FORBIDDEN_ATTRIBUTES``; no defining dunder names outside
    ``ALLOWED_DUNDER_DEFINITIONS``; no positional class sub-patterns except on ``SELF_MATCHING_CLASSES``;
    no 3-argument ``type()``; no dunder-shaped string constants; no bare ``except:``, no naming
    ``UNCATCHABLE_NAMES`` and no return/break/continue in ``finally``; no assignment to attributes except on ``self``/``cls`` (no monkeypatching);
    no draws from the global ``random``/``numpy.random`` generators and no unseeded generators; no
    ``str.format`` templates that walk into private attributes.

    Raises:
      ModelLoadError: naming the line and the reason.
    """
    if len(source) > MAX_SOURCE_CHARS:
        raise ModelLoadError(f"source is {len(source)} characters; the limit is {MAX_SOURCE_CHARS}")
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise ModelLoadError(f"syntax error at line {e.lineno}: {e.msg}") from e
    except (RecursionError, MemoryError, ValueError) as e:
        raise ModelLoadError(f"source could not be parsed ({type(e).__name__}: nested too deeply?)") from e
    _Gate().visit(tree)


def _fail(node: ast.AST, reason: str) -> None:
    raise ModelLoadError(f"line {getattr(node, 'lineno', '?')}: {reason}")


class _Gate(ast.NodeVisitor):
    """Walks the tree once, remembering which local names are bound to the random modules."""

    def __init__(self) -> None:
        self.random_aliases: set[str] = set()
        self.numpy_aliases: set[str] = set()
        self.np_random_aliases: set[str] = set()

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            _check_module(node, alias.name)
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
            _fail(node, "relative imports are not allowed")
        _check_module(node, node.module or "")
        for alias in node.names:
            name = alias.name
            if name == "*":
                _fail(node, f"'from {node.module} import *' is not allowed; import the names you use")
            _check_attribute(node, name, base=None)
            if node.module == "random" and name in GLOBAL_RANDOM_FUNCTIONS:
                _fail(node, f"random.{name} draws from the global generator; use random.Random(seed)")
            if node.module == "numpy.random" and name in NUMPY_GLOBAL_RANDOM_FUNCTIONS:
                _fail(node, f"numpy.random.{name} draws from the global generator; use default_rng(seed)")
            if node.module == "numpy" and name == "random":
                self.np_random_aliases.add(alias.asname or name)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES:
            _fail(node, f"use of {node.id!r} is not allowed")
        if node.id in UNCATCHABLE_NAMES:
            _fail(node, f"use of {node.id!r} is not allowed: catch or raise Exception subclasses only (the "
                        f"sandbox's time-budget interrupt must be able to end the call)")
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            _check_definition(node, node.id)

    def visit_arg(self, node: ast.arg) -> None:
        _check_definition(node, node.arg)
        self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> None:
        _check_definition(node, (node.asname or node.name).split(".")[0])

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        _check_definition(node, node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        _check_definition(node, node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        _check_definition(node, node.rest)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        _check_definition(node, node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        _check_definition(node, node.name)
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:  # ``case object(__class__=c)`` reads an attribute without a dot
            _check_attribute(node, attr, base=None)
        # ``case C(x)`` reads the attribute named in C.__match_args__ from any subject C accepts (and C's
        # metaclass or ABC registry decides what it accepts): an attribute read the gate cannot see.
        if node.patterns and not (isinstance(node.cls, ast.Name) and node.cls.id in SELF_MATCHING_CLASSES):
            _fail(node, "positional sub-patterns in a class pattern ('case C(x)') are allowed only for "
                        f"{', '.join(sorted(SELF_MATCHING_CLASSES))}; use keyword patterns ('case C(field=x)')")
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is None:
            _fail(node, "a bare 'except:' is not allowed (it swallows the sandbox's time-budget interrupt); "
                        "catch Exception or a subclass")
        _check_definition(node, node.name)
        self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> None:
        for stmt in node.finalbody:  # ``finally: continue`` (or break/return) discards any exception
            for sub in ast.walk(stmt):
                if isinstance(sub, (ast.Return, ast.Break, ast.Continue)):
                    _fail(sub, "return, break or continue inside 'finally' is not allowed (it discards the "
                               "sandbox's time-budget interrupt)")
        if node.finalbody:  # a generator collected while suspended here runs 'finally' where errors are dropped
            guarded: list[ast.AST] = [*node.body, *node.handlers, *node.orelse]
            for part in guarded:
                for sub in ast.walk(part):
                    if isinstance(sub, (ast.Yield, ast.YieldFrom, ast.Await)):
                        _fail(sub, "yield or await inside a 'try' that has a 'finally' is not allowed (the "
                                   "'finally' would run where the time-budget interrupt is ignored)")
        self.generic_visit(node)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def visit_Attribute(self, node: ast.Attribute) -> None:
        base = node.value.id if isinstance(node.value, ast.Name) else None
        _check_attribute(node, node.attr, base=base)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and base not in SELF_NAMES:
            _fail(node, f"assigning or deleting attribute {node.attr!r} of another object (monkeypatching) "
                        f"is not allowed; keep state in the game state")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if self._is_random_module(func.value) and func.attr in GLOBAL_RANDOM_FUNCTIONS:
                _fail(node, f"random.{func.attr}() draws from the global generator; use random.Random(seed)")
            if self._is_np_random(func.value) and func.attr in NUMPY_GLOBAL_RANDOM_FUNCTIONS:
                _fail(node, f"numpy.random.{func.attr}() draws from the global generator; use "
                            f"numpy.random.default_rng(seed)")
            name = func.attr
        else:
            name = func.id if isinstance(func, ast.Name) else ""
        if name == "SystemRandom":
            _fail(node, "SystemRandom is not reproducible; use random.Random(seed)")
        if name == "type" and isinstance(func, ast.Name) and len(node.args) + len(node.keywords) > 1:
            _fail(node, "type() with more than one argument builds a class at run time; use a class statement")
        if name in SEEDED_CONSTRUCTORS and not node.args and not node.keywords:
            _fail(node, f"{name}() without a seed is not reproducible; pass a seed")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and _FORMAT_ESCAPE.search(node.value):
            _fail(node, "a format template that reaches private attributes ('{x._...}') is not allowed")
        if (isinstance(node.value, str) and _DUNDER_STRING.match(node.value)
                and node.value not in ALLOWED_DUNDER_STRINGS):
            _fail(node, f"the string {node.value!r} names a dunder attribute; such names are not allowed")

    def _is_random_module(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.random_aliases

    def _is_np_random(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.np_random_aliases
        return (isinstance(node, ast.Attribute) and node.attr == "random" and isinstance(node.value, ast.Name)
                and node.value.id in self.numpy_aliases)


def _check_module(node: ast.AST, name: str) -> None:
    top = name.split(".")[0]
    if top not in ALLOWED_IMPORTS:
        _fail(node, f"import of {name!r} is not allowed (allowed: {', '.join(sorted(ALLOWED_IMPORTS))})")
    if "." in name and name not in ALLOWED_SUBMODULES:
        _fail(node, f"import of submodule {name!r} is not allowed")


def _check_definition(node: ast.AST, name: str | None) -> None:
    if name is None:
        return
    if name in SELF_MATCHING_CLASSES:  # ``int = Probe`` would turn ``case int(x)`` back into an attribute read
        _fail(node, f"rebinding the builtin name {name!r} is not allowed")
    if name.startswith("__") and name.endswith("__") and name not in ALLOWED_DUNDER_DEFINITIONS:
        _fail(node, f"defining {name!r} is not allowed (it changes how Python treats the object)")


def _check_attribute(node: ast.AST, attr: str, *, base: str | None) -> None:
    if attr.startswith("__") and attr.endswith("__"):
        _fail(node, f"access to dunder attribute {attr!r} is not allowed")
    if attr.startswith("_") and base not in SELF_NAMES:
        _fail(node, f"access to private attribute {attr!r} of another object is not allowed")
    if attr in FORBIDDEN_ATTRIBUTES:
        _fail(node, f"access to attribute {attr!r} is not allowed (it reaches the OS, files or internals)")
