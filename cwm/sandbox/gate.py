"""The sandbox's static gate: reject LLM-written source that reaches outside the game before it runs.

The gate is the first of several layers (see docs/security.md). It is deliberately strict about what a
game model has no reason to touch (the OS, the interpreter's internals, files, global randomness) and
names the line, the reason and the rule, so the synthesis loop can show the LLM what to change. Every rule
is one row of ``RULES``; docs/security.md lists the same rows (a test keeps the two equal).
"""

from __future__ import annotations

from dataclasses import dataclass

from cwm.contract import parse_source
from cwm.sandbox.gate_walk import Refusal, Walk
from cwm.sandbox.names import (
    ALLOWED_IMPORTS,
    ALLOWED_SUBMODULES,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_NAMES,
    JAX_POLICY,
    PYTHON_POLICY,
    ImportPolicy,
)
from cwm.types import ModelLoadError

__all__ = ["ALLOWED_IMPORTS", "ALLOWED_SUBMODULES", "FORBIDDEN_ATTRIBUTES", "FORBIDDEN_NAMES", "JAX_POLICY",
           "PYTHON_POLICY", "RULES", "ImportPolicy", "Rule", "static_gate"]

MAX_SOURCE_CHARS = 1_000_000
_TIME = "(the sandbox's time-budget interrupt must be able to end the call)"


@dataclass(frozen=True)
class Rule:
    """One rule of the gate: ``summary`` (what it refuses, as docs/security.md lists it) and ``message``
    (the error, a ``str.format`` template filled in where the rule fires)."""

    summary: str
    message: str


RULES: dict[str, Rule] = {
    "source-size": Rule("sources longer than 1,000,000 characters",
                        "source is {size} characters; the limit is {limit}"),
    "syntax": Rule("source that does not parse, or is nested too deeply to parse", "{detail}"),
    "import": Rule("imports of modules outside the allow-list",
                   "import of {name!r} is not allowed (allowed: {allowed})"),
    "import-submodule": Rule("dotted imports other than the allowed submodules",
                             "import of submodule {name!r} is not allowed"),
    "import-relative": Rule("relative imports", "relative imports are not allowed"),
    "import-star": Rule("`from m import *`", "'from {module} import *' is not allowed; import the names you use"),
    "forbidden-name": Rule("the builtins that reach code, files, frames or attributes by name (`eval`, "
                           "`open`, `getattr`, `vars`, `__import__`, ...)", "use of {name!r} is not allowed"),
    "uncatchable-name": Rule("the names `BaseException`, `KeyboardInterrupt`, `SystemExit`, `GeneratorExit`",
                             "use of {name!r} is not allowed: catch or raise Exception subclasses only " + _TIME),
    "dunder-attribute": Rule("dunder attributes (`x.__class__`), also read through a `match` class pattern",
                             "access to dunder attribute {attr!r} is not allowed"),
    "private-attribute": Rule("private attributes (`x._y`), except on `self`/`cls` inside a method",
                              "access to private attribute {attr!r} of another object is not allowed"),
    "forbidden-attribute": Rule("attributes that lead out of the game (modules, frames, code, file I/O, "
                                "environment, string-driven attribute access)",
                                "access to attribute {attr!r} is not allowed (it reaches the OS, files or "
                                "internals)"),
    "attribute-assignment": Rule("assigning or deleting attributes, except on `self`/`cls` inside a method",
                                 "assigning or deleting attribute {attr!r} of another object (monkeypatching) "
                                 "is not allowed; keep state in the game state"),
    "self-binding": Rule("binding `self` or `cls` inside a method, other than as a method's first parameter",
                         "inside a method, {name!r} may only be the first parameter of a method (a def written "
                         "directly in a class body)"),
    "dunder-definition": Rule("defining dunder names other than ordinary protocol methods",
                              "defining {name!r} is not allowed (it changes how Python treats the object)"),
    "builtin-rebinding": Rule("rebinding the builtin class names that match themselves in `case int(x)`",
                              "rebinding the builtin name {name!r} is not allowed"),
    "class-pattern": Rule("positional sub-patterns in a class pattern (`case C(x)`), except on builtin classes",
                          "positional sub-patterns in a class pattern ('case C(x)') are allowed only for "
                          "{allowed}; use keyword patterns ('case C(field=x)')"),
    "dunder-name": Rule("reading a dunder name other than `__name__` (`__annotations__` in a class body), or "
                        "passing one as a keyword argument (`dict(__annotations__=...)`)",
                        "the dunder name {name!r} is not allowed (it is a namespace the interpreter or a library "
                        "builds classes and modules from)"),
    "class-from-names": Rule("the functional forms of `namedtuple`, `NamedTuple`, `TypedDict`, `Enum` and its "
                             "kin (`Enum('E', names)`) unless every name is a literal plain identifier",
                             "{factory}() builds a class from names given as data ({why}); give the names as "
                             "literal plain identifiers, or use a class statement"),
    "class-factory-value": Rule("`namedtuple`, `NamedTuple`, `TypedDict`, `Enum` and its kin used other than "
                                "called, as a base class or in `isinstance`/`issubclass` (an alias hides what "
                                "it builds)",
                                "{name!r} may only be called with literal names, subclassed or passed to "
                                "isinstance()/issubclass()"),
    "metaclass-call": Rule("calling what `type(x)` returns with a name, bases and a namespace "
                           "(`type(C)(name, bases, ns)` builds a class from a run-time namespace)",
                           "type(...)(name, bases, namespace) builds a class at run time; use a class "
                           "statement"),
    "type-call": Rule("`type` other than as a one-argument call `type(x)` (a class built at run time)",
                      "type() with more than one argument, or type used as a value, builds a class at run time; "
                      "use a class statement"),
    "dunder-string": Rule("string constants shaped like a dunder name (except `\"__main__\"`)",
                          "the string {text!r} names a dunder attribute; such names are not allowed"),
    "bare-except": Rule("a bare `except:`",
                        "a bare 'except:' is not allowed (it swallows the sandbox's time-budget interrupt); "
                        "catch Exception or a subclass"),
    "finally-jump": Rule("`return`, `break` or `continue` inside `finally`",
                         "return, break or continue inside 'finally' is not allowed (it discards the sandbox's "
                         "time-budget interrupt)"),
    "finally-yield": Rule("`yield` or `await` inside a `try` that has a `finally`",
                          "yield or await inside a 'try' that has a 'finally' is not allowed (the 'finally' "
                          "would run where the time-budget interrupt is ignored)"),
    "global-random": Rule("draws from the global `random` generator", "random.{name}{call} draws from the "
                          "global generator; use random.Random(seed)"),
    "global-numpy-random": Rule("draws from the global `numpy.random` generator",
                                "numpy.random.{name}{call} draws from the global generator; use "
                                "numpy.random.default_rng(seed)"),
    "system-random": Rule("`SystemRandom`", "SystemRandom is not reproducible; use random.Random(seed)"),
    "unseeded-generator": Rule("generators built without a seed (`random.Random()`, `default_rng()`)",
                               "{name}() without a seed is not reproducible; pass a seed"),
    "format-receiver": Rule("`.format`/`.format_map` on anything but a string literal (also `str.format` "
                            "unless called with a literal template)",
                            "{attr!r} is allowed only on a string literal ('...'.{attr}(...)), whose template "
                            "the gate can read; use an f-string"),
    "format-template": Rule("string literals whose format fields walk into private, dunder or forbidden names",
                            "a format template that reaches {problem} is not allowed"),
    "builtin-mutator": Rule("the unbound mutating methods of `list` and `dict` (`list.append(x, v)`, "
                            "`dict.update(d, ...)`), which would change a read-only state without its knowing",
                            "{name}.{attr} changes the object it is given in place, past the read-only state "
                            "the contract hands over; call the method on a copy you own (x.{attr}(...))"),
}


def static_gate(source: str, *, policy: ImportPolicy = PYTHON_POLICY) -> None:
    """Rejects source that breaks any rule in ``RULES`` (docs/security.md lists them). ``policy``: what the
    source may import (``JAX_POLICY`` for a JAX twin: ``jax.numpy``, ``jax.lax``, ``jax.random`` and ``math``,
    and none of ``JAX_FORBIDDEN_ATTRIBUTES``).

    Raises:
      ModelLoadError: naming the line, the reason and the rule (``[gate: rule-id]``).
    """
    if len(source) > MAX_SOURCE_CHARS:
        raise _error("source-size", "", size=len(source), limit=MAX_SOURCE_CHARS)
    try:
        tree = parse_source(source)
    except SyntaxError as e:
        raise _error("syntax", "", detail=f"syntax error at line {e.lineno}: {e.msg}") from e
    except (RecursionError, MemoryError, ValueError) as e:
        detail = f"source could not be parsed ({type(e).__name__}: nested too deeply?)"
        raise _error("syntax", "", detail=detail) from e
    try:
        Walk(policy).visit(tree)
    except Refusal as refusal:
        raise _error(refusal.rule, f"line {refusal.line}: ", **refusal.fields) from None


def _error(rule: str, where: str, **fields: object) -> ModelLoadError:
    return ModelLoadError(f"{where}{RULES[rule].message.format(**fields)} [gate: {rule}]")
