"""cwm.llm's modules import each other at module level without cycles; only the provider SDKs load lazily."""

from __future__ import annotations

import ast
import graphlib
import os
import subprocess
import sys
from pathlib import Path

import cwm.llm

PACKAGE = Path(cwm.llm.__file__).parent
# (module, what it imports inside a function): the SDKs, optional or slow to import, and nothing else
LAZY = {("factory", "cwm.llm.gemini"), ("openai_compat", "openai")}


def _imports(tree: ast.Module) -> list[tuple[str, bool]]:
    """``(imported module, inside a function)`` for every import statement of a module."""
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((alias.name, nested) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module:
                found.append((child.module, nested))
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, inner)

    visit(tree, False)
    return found


def _modules() -> dict[str, list[tuple[str, bool]]]:
    modules = {p.stem: _imports(ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(PACKAGE.glob("*.py"))}
    assert len(modules) >= 14, sorted(modules)  # the test reads the package, not an empty folder
    return modules


def test_only_the_provider_sdks_are_imported_inside_functions():
    lazy = {(name, target) for name, imports in _modules().items() for target, nested in imports if nested}
    assert lazy == LAZY


def test_the_package_modules_import_each_other_without_cycles():
    graph = {name: {t.removeprefix("cwm.llm.") for t, nested in imports if t.startswith("cwm.llm.") and not nested}
             for name, imports in _modules().items() if name != "__init__"}
    assert sum(map(len, graph.values())) >= 20  # the graph was read
    order = list(graphlib.TopologicalSorter(graph).static_order())  # raises CycleError on a cycle
    assert order.index("types") < order.index("ledger") < order.index("base") < order.index("factory")
    assert graph["types"] == set()  # the bottom: everything else builds on it


def test_importing_the_package_loads_no_provider_sdk():
    code = "import sys, cwm.llm; print(sorted(m for m in ('google.genai', 'openai') if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"
