"""The gate's rule table: every rule fires with its own id, docs/security.md lists exactly the table, and the
rules on self/cls and on format templates mean what they say."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from cwm.sandbox import load_source, static_gate
from cwm.sandbox.gate import RULES
from cwm.types import ModelLoadError

SECURITY_DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"

# One source per rule that breaks that rule first.
RULE_EXAMPLES = {
    "source-size": "x = 1\n" * 200_000,
    "syntax": "def f(:\n",
    "import": "import os\n",
    "import-submodule": "import numpy.fft\n",
    "import-relative": "from . import x\n",
    "import-star": "from math import *\n",
    "forbidden-name": "x = getattr\n",
    "uncatchable-name": "raise SystemExit\n",
    "dunder-attribute": "x = ().__class__\n",
    "private-attribute": "import random\nx = random._os\n",
    "forbidden-attribute": "import typing\nx = typing.sys\n",
    "attribute-assignment": "import math\nmath.pi = 3\n",
    "self-binding": "class A:\n    def m(self):\n        self = 1\n",
    "dunder-definition": "def __del__():\n    pass\n",
    "builtin-rebinding": "int = float\n",
    "class-pattern": "class P:\n    pass\nmatch 1:\n    case P(x):\n        pass\n",
    "dunder-name": "class A:\n    x: int\n    __annotations__['y'] = int\n",
    "class-from-names": "from collections import namedtuple\nnames = ['a']\nP = namedtuple('P', names)\n",
    "class-factory-value": "from enum import Enum\nE = Enum\n",
    "metaclass-call": "class C:\n    pass\nP = type(C)('P', (), {})\n",
    "type-call": "t = type\n",
    "dunder-string": "x = '__class__'\n",
    "bare-except": "try:\n    pass\nexcept:\n    pass\n",
    "finally-jump": "for i in []:\n    try:\n        pass\n    finally:\n        break\n",
    "finally-yield": "def g():\n    try:\n        yield 1\n    finally:\n        pass\n",
    "global-random": "import random\nx = random.random()\n",
    "global-numpy-random": "import numpy as np\nx = np.random.rand()\n",
    "system-random": "import random\nr = random.SystemRandom(1)\n",
    "unseeded-generator": "import random\nr = random.Random()\n",
    "format-receiver": "t = '{}'\nx = t.format(1)\n",
    "format-template": "x = '{0.__class__}'\n",
    "builtin-mutator": "def f(state):\n    list.append(state[\"l\"], 1)\n",
}


@pytest.mark.parametrize("rule", list(RULE_EXAMPLES), ids=list(RULE_EXAMPLES))
def test_each_rule_names_itself(rule: str) -> None:
    with pytest.raises(ModelLoadError) as err:
        static_gate(RULE_EXAMPLES[rule])
    assert str(err.value).endswith(f" [gate: {rule}]"), str(err.value)


def test_every_rule_has_an_example() -> None:
    assert set(RULE_EXAMPLES) == set(RULES)


def test_the_walk_raises_only_rules_of_the_table() -> None:
    from cwm.sandbox import gate_walk

    tree = ast.parse(Path(gate_walk.__file__).read_text(encoding="utf-8"))
    used = {node.args[1].value for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id == "_fail" and isinstance(node.args[1], ast.Constant)}
    assert used and used <= set(RULES), used - set(RULES)


def documented_rules() -> dict[str, str]:
    """The rows of the table under "The gate's rules" in docs/security.md: ``| `rule-id` | summary |``."""
    section = SECURITY_DOC.read_text(encoding="utf-8").split("### The gate's rules", 1)[1]
    table = re.match(r"\s*((?:\s*\|.*\|\n)+)", section)
    assert table, "docs/security.md has no table under its heading \"The gate's rules\""
    rows = re.findall(r"^\s*\| `([a-z-]+)` \| (.+?) \|$", table.group(1), flags=re.M)
    return dict(rows)


def test_docs_list_exactly_the_rules_of_the_gate() -> None:
    documented = documented_rules()
    assert sorted(documented) == sorted(RULES), "docs/security.md's rule table and gate.RULES differ"
    assert documented == {rule: r.summary for rule, r in RULES.items()}


ALLOWED = {
    "method-private": "class A:\n    def __init__(self):\n        self._x = 1\n    def get(self):\n        return self._x\n",
    "classmethod-private": "class A:\n    _n = 0\n    @classmethod\n    def make(cls):\n        cls._n += 1\n",
    "closure-in-method": "class A:\n    def m(self):\n        return sorted([1], key=lambda k: self._rank)\n",
    "nested-class-method": "class A:\n    def m(self):\n        class B:\n            def n(cls):\n                return cls._y\n"
                           "        return B\n",
    "module-level-cls-loop": "for cls in (int, str):\n    pass\ndef f(self):\n    return self\n",
    "format-literal": "def f(a):\n    return '{} {x}'.format(a, x=1) + '{0[k]}'.format({'k': 1})\n",
    "format-literal-alias": "show = 'x({},{})'.format\n",
    "str-format-literal": "x = str.format('{}-{}', 1, 2)\n",
    "format-map-literal": "x = '{a}'.format_map({'a': 1})\n",
    "format-private-argument-name": "x = '{_hidden}'.format(_hidden=1)\n",
    "type-of": "def same(a, b):\n    return type(a) == type(b)\n",
    "main-guard": "if __name__ == '__main__':\n    pass\n",
    "factory-in-annotations": "import enum\nfrom typing import NamedTuple\nx: enum.Enum = None\n"
                              "def f(a: NamedTuple, b: 'list[enum.Flag]') -> enum.Enum:\n    return a\n",
}

# Classes built the ordinary ways, which the class-building rules and the runtime barrier must leave alone:
# each loads through load_source (the gate, the restricted builtins and views, the code-generation hook) and
# ``probe()`` answers what the class it built holds.
CLASS_BUILDERS = {
    "dataclass": ("from dataclasses import dataclass, field\n@dataclass(frozen=True)\nclass P:\n    x: int\n"
                  "    ys: tuple = field(default_factory=tuple)\ndef probe():\n    return [hash(P(1)) == hash(P(1)), P(2)]",
                  "[True, P(x=2, ys=())]"),
    "dataclass-subclass": ("from dataclasses import dataclass\n@dataclass\nclass A:\n    x: int = 0\n@dataclass\n"
                           "class B(A):\n    y: int = 1\ndef probe():\n    return B(3, 4)", "B(x=3, y=4)"),
    "namedtuple-literal": ("from collections import namedtuple\nP = namedtuple('P', 'x y')\n"
                           "Q = namedtuple('Q', ['a', 'b'], defaults=[0])\ndef probe():\n    return (P(1, 2), Q(5))",
                           "(P(x=1, y=2), Q(a=5, b=0))"),
    "NamedTuple-class": ("from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n    y: int = 0\n"
                         "def probe():\n    return P(1)", "P(x=1, y=0)"),
    "NamedTuple-functional": ("import typing\nP = typing.NamedTuple('P', [('x', int)])\ndef probe():\n"
                              "    return P(7)", "P(x=7)"),
    "Enum-class": ("import enum\nclass Color(enum.Enum):\n    RED = 1\n    BLUE = 2\ndef probe():\n"
                   "    return [c.name for c in Color if isinstance(c, enum.Enum)]", "['RED', 'BLUE']"),
    "Enum-functional": ("from enum import Enum, IntFlag\nColor = Enum('Color', 'RED GREEN')\n"
                        "Perm = IntFlag('Perm', {'R': 4, 'W': 2})\ndef probe():\n    return [Color.GREEN.value, int(Perm.R | Perm.W)]",
                        "[2, 6]"),
    "TypedDict-functional": ("from typing import TypedDict\nT = TypedDict('T', {'a': int})\ndef probe():\n"
                             "    return T(a=1)", "{'a': 1}"),
    "type-self-instance": ("class P:\n    def __init__(self, n):\n        self.n = n\n    def again(self):\n"
                           "        return type(self)(self.n + 1)\ndef probe():\n    return P(1).again().n", "2"),
}


@pytest.mark.parametrize("source,shown", list(CLASS_BUILDERS.values()), ids=list(CLASS_BUILDERS))
def test_ordinary_class_building_passes_every_barrier(source: str, shown: str) -> None:
    module = load_source(source, api=())
    assert repr(module.probe()) == shown

REJECTED = {
    "lambda-self": ("import random\nx = (lambda self: self._os)(random)\n", "line 2: access to private attribute '_os'"),
    "lambda-cls": ("import collections\nx = (lambda cls: cls._sys)(collections)\n", "private attribute '_sys'"),
    "module-function-self": ("import random\ndef f(self):\n    return self._os\n", "line 3: access to private"),
    "module-function-assign": ("def f(self, v):\n    self.to_json = v\n", "assigning or deleting attribute 'to_json'"),
    "second-parameter": ("class A:\n    def m(self, cls):\n        return cls._os\n", "private attribute '_os'"),
    "staticmethod": ("class A:\n    @staticmethod\n    def m(self):\n        return self._os\n", "private attribute"),
    "default-value": ("import random\nclass A:\n    def m(self, x=self._os):\n        pass\n", "private attribute"),
    "nested-def-self": ("class A:\n    def m(self):\n        def g(self):\n            return self._os\n",
                        "line 3: inside a method, 'self' may only be the first parameter"),
    "nested-lambda-self": ("class A:\n    def m(self):\n        return lambda self: self._os\n", "'self' may only"),
    "rebind-self": ("import random\nclass A:\n    def m(self):\n        self = random\n", "'self' may only"),
    "comprehension-self": ("class A:\n    def m(self):\n        return [self._x for self in ()]\n", "'self' may only"),
    "global-self": ("class A:\n    def m(self):\n        global cls\n", "'cls' may only"),
    "runtime-template": ("import random\nx = ('{0.' + '_os}').format(random)\n", "'format' is allowed only on a string"),
    "str-format-variable": ("t = '{}'\nx = str.format(t, 1)\n", "'format' is allowed only on a string literal"),
    "str-format-alias": ("render = str.format\n", "'format' is allowed only on a string literal"),
    "fstring-receiver": ("n = 'x'\nx = f'{{0.{n}}}'.format(1)\n", "'format' is allowed only"),
    "format-map-variable": ("t = '{a}'\nx = t.format_map({})\n", "'format_map' is allowed only"),
    "method-format": ("class A:\n    def m(self):\n        return self.format(1)\n", "'format' is allowed only"),
    "literal-private-walk": ("x = str.format('{0._os}', 1)\n", "reaches the private name '_os' (field {0._os})"),
    "nested-spec-walk": ("x = '{0:{1.f_globals}}'.format(1, 2)\n", "reaches the forbidden attribute 'f_globals'"),
    "private-index": ("x = '{0[_secret]}'.format({})\n", "reaches the private name '_secret'"),
    "type-three-arguments": ("P = type('P', (), {})\n", "type() with more than one argument"),
    "annotations-read": ("class A:\n    x: int\n    y = __annotations__\n", "dunder name '__annotations__'"),
    "dunder-keyword": ("ns = dict(__slots__=())\n", "dunder name '__slots__'"),
    "dict-name": ("x = __dict__\n", "dunder name '__dict__'"),
    "namedtuple-star": ("from collections import namedtuple\nP = namedtuple('P', *['x'])\n", "unpacked with *"),
    "enum-computed": ("import enum\nE = enum.Enum('E', [n for n in 'ab'])\n", "not written out in the source"),
    "enum-dunder-literal": ("import enum\nE = enum.Flag('E', ['a', 'if'])\n", "'if' is not a plain identifier"),
    "factory-argument": ("import typing\ndef f(g):\n    return g\nf(typing.NamedTuple)\n", "'NamedTuple' may only"),
    "factory-bound-in-annotation": ("from enum import Enum\ndef f(a: (g := Enum)):\n    pass\n", "'Enum' may only"),
    "metaclass-star": ("class C:\n    pass\nargs = ('P', (), {})\nP = type(C)(*args)\n", "type(...)(name, bases"),
    "cython-globals": ("import numpy as np\ng = np.random.default_rng.func_globals\n", "attribute 'func_globals'"),
    "update-wrapper": ("import functools\nf = functools.update_wrapper\n", "attribute 'update_wrapper'"),
    "attrgetter-from-import": ("from operator import attrgetter\n", "import of 'operator' is not allowed"),
}


@pytest.mark.parametrize("source", list(ALLOWED.values()), ids=list(ALLOWED))
def test_the_gate_allows(source: str) -> None:
    static_gate(source)


@pytest.mark.parametrize("source,reason", list(REJECTED.values()), ids=list(REJECTED))
def test_the_gate_rejects(source: str, reason: str) -> None:
    with pytest.raises(ModelLoadError, match=re.escape(reason)):
        static_gate(source)


RECORDINGS = Path(__file__).resolve().parents[2] / "cwm" / "data" / "recordings"
CLASS_RULES = {"dunder-name", "class-from-names", "class-factory-value", "metaclass-call"}


def recorded_code() -> list[str]:
    """Every fenced Python block of every reply in the sessions shipped with cwm that defines a function."""
    fence = re.compile(r"```(?:python)?\n(.*?)```", re.S)
    blocks = []
    for path in sorted(RECORDINGS.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            texts = json.loads(line).get("response", {}).get("texts", [])
            blocks += [b for text in texts for b in fence.findall(text) if "def " in b]
    return blocks


def test_recorded_replies_meet_no_class_building_refusal() -> None:
    """The models the shipped sessions hold are refused by no class-building rule, and every one the gate
    accepts runs its module body past the runtime barrier (so recorded sessions replay as before)."""
    blocks = recorded_code()
    assert len(blocks) >= 40, len(blocks)
    accepted = 0
    for block in blocks:
        try:
            static_gate(block)
        except ModelLoadError as e:
            assert not any(f"[gate: {rule}]" in str(e) for rule in CLASS_RULES), str(e)
            continue
        try:
            load_source(block, api=())
        except ModelLoadError as e:
            assert "sandbox:" not in str(e), str(e)
        accepted += 1
    assert accepted >= 40, accepted
