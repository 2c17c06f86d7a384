"""Running untrusted (LLM-written) code: the static gate. Isolated execution is built on top of it."""

from __future__ import annotations

import ast

from cwm.types import ModelLoadError

ALLOWED_IMPORTS = frozenset({
    "math", "random", "itertools", "functools", "collections", "copy", "json", "re", "dataclasses", "typing",
    "enum", "heapq", "bisect", "string", "numpy",
})
FORBIDDEN_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "__builtins__", "input",
    "breakpoint", "getattr", "setattr", "delattr", "memoryview", "exit", "quit", "help",
})


def static_gate(source: str) -> None:
    """Rejects source that does not parse, imports outside the allow-list, or names dangerous things.

    Raises:
      ModelLoadError: naming the line and the reason.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise ModelLoadError(f"syntax error at line {e.lineno}: {e.msg}") from e
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in ALLOWED_IMPORTS:
                    raise ModelLoadError(f"line {line}: import of {alias.name!r} is not allowed")
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] not in ALLOWED_IMPORTS or node.level:
                raise ModelLoadError(f"line {line}: import from {node.module!r} is not allowed")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            raise ModelLoadError(f"line {line}: use of {node.id!r} is not allowed")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__"):
            raise ModelLoadError(f"line {line}: access to dunder attribute {node.attr!r} is not allowed")
