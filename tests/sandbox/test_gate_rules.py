"""The gate's rule table: every rule fires with its own id, docs/security.md lists exactly the table, and the
rules on self/cls and on format templates mean what they say."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cwm.sandbox import static_gate
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
}

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
