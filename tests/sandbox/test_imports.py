"""What candidate code gets from ``import``: per-candidate, public-only views of the allowed modules."""

from __future__ import annotations

import collections.abc
import json
import math
import random
import types

import numpy as np
import pytest

from cwm.sandbox import load_source
from cwm.sandbox.imports import make_importer


def run(source: str) -> types.ModuleType:
    """Loads ``source`` with the gate off (the views are the layer under test) and the sandbox's builtins."""
    from cwm.sandbox.layers import restricted_builtins

    module = types.ModuleType("candidate")
    module.__dict__["__builtins__"] = restricted_builtins()
    exec(compile(source, "<candidate>", "exec"), module.__dict__)
    return module


def test_a_view_holds_the_real_public_objects_and_nothing_private() -> None:
    m = run("import random, typing, string, json\n")
    assert m.random.Random is random.Random and m.json.JSONDecodeError is json.JSONDecodeError
    assert not hasattr(m.random, "_os") and not hasattr(m.typing, "sys") and not hasattr(m.string, "Formatter")
    assert not hasattr(m.typing, "get_type_hints") and not hasattr(m.json, "decoder")  # forbidden, a module
    assert type(m.random) is types.ModuleType and m.random is not random  # an exact module: fast lookups


@pytest.mark.parametrize("source,name", [
    ("import numpy.random\nr = numpy.random\n", "numpy.random"),
    ("from numpy import random as r\n", "numpy.random"),
    ("import numpy.random as r\n", "numpy.random"),
    ("import numpy.linalg\nr = numpy.linalg\n", "numpy.linalg"),
    ("import collections.abc\nr = collections.abc\n", "collections.abc"),
    ("from collections import abc as r\n", "collections.abc"),
], ids=["import-dotted", "from-import", "import-as", "linalg", "collections-abc", "from-collections"])
def test_allowed_submodules_are_views_on_every_import_path(source: str, name: str) -> None:
    r = run(source).r
    assert type(r) is types.ModuleType and r.__name__ == name
    assert all(not k.startswith("_") or k.startswith("__") for k in vars(r))
    assert not any(isinstance(v, types.ModuleType) for k, v in vars(r).items() if not k.startswith("__"))


def test_the_views_keep_working_objects() -> None:
    m = run("import numpy.random\nimport numpy as np\nfrom collections.abc import Mapping\n"
            "rng = np.random.default_rng(3)\nx = float(np.linalg.norm(np.arange(4.0)))\n"
            "total = int(np.arange(5).sum() + np.arange(5).std() * 0)\nis_map = isinstance({}, Mapping)\n")
    assert m.rng.integers(0, 10) == np.random.default_rng(3).integers(0, 10)
    assert (m.x, m.total, m.is_map) == (math.sqrt(14), 10, True)  # numpy's private imports still work
    assert m.np.random is m.numpy.random  # one view per module and candidate


@pytest.mark.parametrize("source", [
    "from random import _os\n", "from numpy import fft\n", "from numpy import lib\n", "from json import decoder\n",
    "from typing import sys\n", "import numpy.fft\n", "import os\n", "from numpy._core import multiarray\n",
], ids=["private", "other-submodule", "forbidden-submodule", "json-submodule", "forbidden-name", "dotted", "os",
        "private-package"])
def test_names_a_view_lacks_cannot_be_imported(source: str) -> None:
    with pytest.raises(ImportError, match="sandbox"):
        run(source)


def test_each_candidate_has_its_own_copies() -> None:
    first = run("import math\nimport json\nmath.pi = 3\njson.dumps = None\n")
    second = run("import math\nimport json\n")
    assert first.math.pi == 3 and math.pi != 3 and second.math.pi == math.pi
    assert json.dumps is not None and second.json.dumps is json.dumps


def test_load_source_hands_out_views() -> None:
    module = load_source("import random\nimport collections.abc\n", api=())
    assert module.random is not random and module.random.Random is random.Random
    assert module.collections.abc.Mapping is collections.abc.Mapping


def test_an_importer_reads_no_module_global_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    """Everything the importer needs is in its closure: patching the module's names changes nothing."""
    from cwm.sandbox import imports

    guarded = make_importer()
    monkeypatch.setattr(imports, "ALLOWED_IMPORTS", frozenset({"os"}))
    monkeypatch.setattr(imports, "attribute_problem", lambda name: "")
    with pytest.raises(ImportError, match="sandbox"):
        guarded("os")
    assert not hasattr(guarded("random"), "_os")
