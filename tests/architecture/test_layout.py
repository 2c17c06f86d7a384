"""The shape of the library (docs/architecture.md), measured on the installed package: at most 16 modules at the
``cwm/`` root, every package's ``__init__`` names its public surface, no function over 60 lines or 8 parameters,
and imports of cwm's own modules inside functions only where a comment says why (an optional dependency or a
measured start-up cost), at most 10 of them. import-linter's contracts (pyproject.toml, run by .ci/run) hold
the layers; these hold the rest."""

from __future__ import annotations

import ast
from pathlib import Path

import cwm
import planners

CWM = Path(cwm.__file__).resolve().parent
PLANNERS = Path(planners.__file__).resolve().parent
SOURCES = sorted([*CWM.rglob("*.py"), *PLANNERS.rglob("*.py")])
ROOT_MODULES = 16  # 14 kernel modules (the JAX twin contract beside the Python one), __init__.py and cli.py
MAX_LINES = 60
MAX_PARAMETERS = 8
MAX_LAZY_MODULES = 10


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _functions(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(_tree(path)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    count = len(names) + (a.vararg is not None) + (a.kwarg is not None)
    return count - (1 if names and names[0].arg in ("self", "cls") else 0)


def _name(path: Path, fn: ast.AST) -> str:
    return f"{path.relative_to(CWM.parent)}:{getattr(fn, 'lineno', 0)} {getattr(fn, 'name', '')}"


def test_the_scan_sees_the_library() -> None:
    assert len(SOURCES) > 150 and any(p.name == "box.py" for p in SOURCES)


def test_at_most_sixteen_modules_stay_at_the_cwm_root() -> None:
    root = sorted(p.name for p in CWM.glob("*.py"))
    assert len(root) <= ROOT_MODULES, root


def test_every_package_names_its_public_surface() -> None:
    missing = []
    for init in [*CWM.rglob("__init__.py"), *PLANNERS.rglob("__init__.py")]:
        tree = _tree(init)
        named = any(isinstance(n, (ast.Assign, ast.AnnAssign)) and "__all__" in ast.unparse(n).split("=")[0]
                    for n in tree.body)
        if not named:
            missing.append(str(init.relative_to(CWM.parent)))
    assert not missing


def test_no_function_is_over_sixty_lines_or_eight_parameters() -> None:
    long = [_name(p, f) for p in SOURCES for f in _functions(p) if f.end_lineno - f.lineno + 1 > MAX_LINES]
    many = [_name(p, f) for p in SOURCES for f in _functions(p) if _parameters(f) > MAX_PARAMETERS]
    assert not long and not many, (long, many)


def _lazy_imports() -> list[tuple[str, str, str]]:
    """(where, module imported, the line) of every import of cwm's or planners' own modules inside a function."""
    found = []
    for path in SOURCES:
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in _functions(path):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    module = node.module
                elif isinstance(node, ast.Import):
                    module = node.names[0].name
                else:
                    continue
                if module.split(".")[0] in ("cwm", "planners"):
                    found.append((_name(path, node), module, lines[node.lineno - 1]))
    return found


def test_imports_inside_functions_are_few_and_say_why() -> None:
    lazy = _lazy_imports()
    modules = {module for _, module, _ in lazy}
    assert len(modules) <= MAX_LAZY_MODULES, sorted(modules)
    # each such import carries its reason on its own line or the line above it
    unexplained = []
    for where, _, line in lazy:
        path, _, rest = where.partition(":")
        lineno = int(rest.split()[0])
        text = (CWM.parent / path).read_text(encoding="utf-8").splitlines()
        if "#" not in line and not text[lineno - 2].strip().startswith("#"):
            unexplained.append(where)
    assert not unexplained


def test_the_lazy_import_scan_finds_the_known_one() -> None:
    """Google's SDK is imported only when a Gemini client is built: the scan must see that import (it counts
    imports inside functions, so a scan that found none would pass the test above for nothing)."""
    assert any(module == "cwm.llm.gemini" and where.startswith("cwm/llm/factory.py") for where, module, _ in _lazy_imports())
