"""Pulling candidate programs out of an LLM reply: fenced blocks, unclosed fences, bare code, several versions."""

from __future__ import annotations

import ast
import builtins
import dataclasses
import re
import textwrap
from collections.abc import Sequence

from cwm.contract import parse_source
from cwm.types import CwmError

# An opening fence (``` or ~~~, optionally with a language tag) at the start of a line.
_OPEN = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+.-]*)[^\n]*$", re.MULTILINE)
_DEF = re.compile(r"^def[ \t]+([A-Za-z_]\w*)[ \t]*\(", re.MULTILINE)
# Lines that can start a bare (unfenced) Python module.
_CODE_START = re.compile(r"^(?:import |from \w|def |class |@|[A-Za-z_]\w*\s*(?::[^=]+)?=[^=])")
_NOT_PYTHON = frozenset({"json", "text", "txt", "output", "console", "bash", "sh", "shell", "diff", "yaml", "markdown", "md"})


class CodeExtractionError(CwmError, ValueError):
    """A reply from which no candidate program could be taken; the message says what was found instead."""


@dataclasses.dataclass(frozen=True)
class Extraction:
    """The candidate programs found in one reply.

    Attributes:
      candidates: complete module sources, in the order they appear (duplicates removed).
      how: how they were found: ``"blocks"`` (one fenced block per candidate), ``"joined"`` (several
        blocks concatenated into one module), ``"bare"`` (code without fences), ``"unclosed"``
        (a fence that was never closed, e.g. a reply cut off at the token limit).
    """

    candidates: tuple[str, ...]
    how: str


def defined_functions(source: str) -> set[str]:
    """Names of the top-level functions a source defines (read textually, so broken code still counts)."""
    return set(_DEF.findall(source))


def extract_code(reply: str, required: Sequence[str]) -> Extraction:
    """Finds the candidate programs in an LLM reply.

    Rules, in order:
      1. Fenced blocks (closed or not, Python or untagged). Each block that defines every ``required``
         function is a candidate of its own (a reply may offer several versions).
         A candidate block that uses names (constants, helpers) defined only in other, partial blocks is
         joined after those blocks.
      2. Otherwise, when the blocks together define every required function, they are joined in order
         into one module (code split across blocks).
      3. Without fences: the code-like tail of the reply (from the first import/def line), trimmed of
         trailing prose until it parses.

    CRLF line ends are read as LF, and a fenced block indented as a whole (under a markdown list item)
    is dedented.

    Args:
      reply: the reply text.
      required: the function names a complete candidate defines (the contract).

    Returns:
      The candidates; broken code (syntax errors) is still returned, so it is scored, not lost.

    Raises:
      CodeExtractionError: the reply holds no code, or its code misses required functions (named).
    """
    need = set(required)
    reply = reply.replace("\r\n", "\n")  # CRLF replies: the fence patterns work on "\n" lines
    blocks, unclosed = _fenced_blocks(reply)
    how = "unclosed" if unclosed else "blocks"
    if not blocks:
        bare = _bare_code(reply)
        blocks, how = ([bare], "bare") if bare else ([], how)
    if not blocks:
        raise CodeExtractionError("the reply contains no code (no fenced block and no Python definitions)")
    whole = [b for b in blocks if need <= defined_functions(b)]
    if whole:
        helpers = [b for b in blocks if b not in whole]
        completed = [_with_helpers(b, helpers) for b in whole]
        how = "joined" if completed != whole and how == "blocks" else how
        return Extraction(tuple(dict.fromkeys(completed)), how)
    joined = "\n\n".join(b for b in blocks if defined_functions(b) or _has_imports(b))
    found = defined_functions(joined)
    if need <= found:
        return Extraction((joined,), "joined" if how == "blocks" else how)
    missing = sorted(need - found)
    raise CodeExtractionError(
        f"the reply's code does not define {missing} (found {len(blocks)} code block(s) defining "
        f"{sorted(found) or 'no contract functions'}); a complete module is required"
    )


def _fenced_blocks(reply: str) -> tuple[list[str], bool]:
    """Contents of fenced blocks that may be Python; the flag says the last fence was never closed."""
    blocks: list[str] = []
    pos = 0
    while True:
        m = _OPEN.search(reply, pos)
        if m is None:
            return blocks, False
        fence, lang = m.group(1), m.group(2).lower()
        start = m.end() + 1
        close = re.compile(rf"^[ \t]*{re.escape(fence)}[ \t]*$", re.MULTILINE).search(reply, start)
        # a block indented under a markdown list item holds indented code: back to column 0
        body = textwrap.dedent(reply[start: close.start() if close else len(reply)])
        if lang not in _NOT_PYTHON and body.strip():
            blocks.append(body.rstrip() + "\n")
        if close is None:
            return blocks, True
        pos = close.end()


def _bare_code(reply: str) -> str:
    """The Python module in a reply without fences, or "" when there is none."""
    lines = reply.splitlines()
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None or not _DEF.search(reply):
        return ""
    tail = lines[start:]
    for end in range(len(tail), 0, -1):
        candidate = "\n".join(tail[:end]).rstrip() + "\n"
        if _parses(candidate):
            return candidate if defined_functions(candidate) else ""
    return "\n".join(tail).rstrip() + "\n"  # nothing parses: keep it all, the loader names the syntax error


def _with_helpers(block: str, helpers: list[str]) -> str:
    """``block`` preceded by the other blocks that define names it uses but does not define itself."""
    free = _free_names(block)
    used = [h for h in helpers if free & _top_level_names(h)]
    return "\n\n".join([*used, block]) if used else block


def _top_level_names(source: str) -> set[str]:
    try:
        tree = parse_source(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        else:
            names.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return names


def _free_names(source: str) -> set[str]:
    """Names a module reads but neither defines at top level nor gets from builtins (approximate)."""
    try:
        tree = parse_source(source)
    except SyntaxError:
        return set()
    bound = _top_level_names(source) | set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def _parses(source: str) -> bool:
    try:
        parse_source(source)
    except SyntaxError:
        return False
    return True


def _has_imports(block: str) -> bool:
    return bool(re.search(r"^(?:import|from)\s", block, re.MULTILINE))


__all__ = ["CodeExtractionError", "Extraction", "defined_functions", "extract_code"]
