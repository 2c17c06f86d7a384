"""Crash-safe file writes (a reader, or a resumed run, never sees a half-written file), text and JSON Lines
files read with one-line errors naming the file and line, a resumable run's append-only record file read
back after a crash, the one check every resumable run directory makes of its ``config.json``, and
``quiet_stderr`` (file descriptor 2 silenced while OpenSpiel's C++ prints exceptions we catch)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from cwm.types import CwmError

T = TypeVar("T")


class TextFileError(CwmError, ValueError):
    """A text file that is not UTF-8; the message names the file, the line and the column."""


def atomic_write(path: Path, text: str, *, sync: bool = False) -> None:
    """Writes ``text`` to ``path`` via a temporary file in the same folder and a rename.

    Args:
      sync: also flush the file and its folder to the disk before returning (``fsync``), so the write
        survives a power cut, not only a killed process.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")  # one per writer
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if sync:
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def read_text(path: Path, *, what: str = "file") -> str:
    """The text of a UTF-8 file, line ends made ``\\n`` (as ``Path.read_text`` makes them).

    Args:
      what: what the file is, for the error ("rules file").

    Raises:
      TextFileError: the file is not UTF-8 text (names the file, the line and the column of the first
        byte that is not).
      OSError: the file cannot be read.
    """
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise TextFileError(f"{what} {path}: not UTF-8 text at line {line}, column {column} (byte "
                            f"{data[e.start]:#04x}); save it as UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


class LineError(CwmError, ValueError):
    """A line of a JSON Lines file that is not one of its records; the message names the file and line."""


def parse_jsonl(path: Path, data: bytes, parse: Callable[[Any], T], *, what: str) -> tuple[list[T], int | None]:
    """The records of JSON Lines ``data`` (read from ``path``), each ``parse(json.loads(line))``; blank lines
    are skipped.

    The last line may be a torn write (a writer killed, or still writing, mid-line): when it does not parse
    it is left out and its number returned, for the caller to warn or cut it off. Any other line that is not
    UTF-8, not JSON, or that ``parse`` refuses is an error, since leaving it out would lose a record.

    Args:
      what: what a record is, for the error ("a match result").

    Returns:
      the records, and the number of a torn last line (``None`` when there is none).

    Raises:
      LineError: a line other than the last is not a record (names the file, the line and why).
    """
    numbered = [(n, line) for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]
    records: list[T] = []
    for i, (number, line) in enumerate(numbered):
        try:
            records.append(_parse_line(path, number, line, parse, what))
        except LineError:
            if i == len(numbered) - 1:
                return records, number
            raise
    return records, None


def read_appended(path: Path, parse: Callable[[Any], T], *, what: str, redo: str, log: logging.Logger) -> list[T]:
    """The records of a resumable run's append-only JSON Lines file (``parse_jsonl``), the file repaired for
    the run to append to: a torn last line (a run killed while writing it) is cut off the file with a warning
    on ``log`` naming the file and line, and a whole last line that only lacks its newline gets it. No file
    reads as no records.

    Args:
      what: what a record is, for the error ("a match result").
      redo: what becomes of a torn line's record, for the warning ("its match is played again").
      log: the caller's logger.

    Raises:
      LineError: a line other than the last is not a record (names the file, the line and why).
    """
    if not path.exists():
        return []
    data = path.read_bytes()
    records, torn = parse_jsonl(path, data, parse, what=what)
    if torn is not None:
        log.warning("%s:%d: the last line is cut short (a run was killed while writing it); it is dropped and %s",
                    path, torn, redo)
        kept = data.split(b"\n")[: torn - 1]
        path.write_bytes(b"\n".join(kept).rstrip(b"\n") + b"\n" if records else b"")
    elif data and not data.endswith(b"\n"):
        path.write_bytes(data + b"\n")
    return records


def _parse_line(path: Path, number: int, line: bytes, parse: Callable[[Any], T], what: str) -> T:
    try:
        return parse(json.loads(line.decode("utf-8")))
    except UnicodeDecodeError as e:
        why = f"not UTF-8 text: byte {line[e.start]:#04x} at column {e.start + 1}"
    except json.JSONDecodeError as e:
        why = f"not JSON: {e.msg} at column {e.colno}"
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        why = f"{type(e).__name__}: {e}"
    raise LineError(f"{path}:{number}: not {what} ({why})")


def changed_settings(path: Path, config: Mapping[str, Any], *, ignore: Collection[str] = ()) -> list[str]:
    """The settings that differ between a run directory's stored ``config.json`` (at ``path``) and
    ``config``: ``differing_keys`` of the two, none when there is no such file."""
    if not path.is_file():
        return []
    return differing_keys(json.loads(path.read_text(encoding="utf-8")), config, ignore=ignore)


def differing_keys(old: Mapping[str, Any], new: Mapping[str, Any], *, ignore: Collection[str] = ()) -> list[str]:
    """The top-level keys whose values differ, sorted. Keys in ``ignore`` (settings a run may change when it
    resumes, such as a larger budget) are not compared. ``new`` is compared in its JSON form, so tuples
    equal the lists they are stored as."""
    new = json.loads(json.dumps(new, default=str))
    return sorted(k for k in set(old) | set(new) if k not in ignore and old.get(k) != new.get(k))


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silences file descriptor 2: OpenSpiel's C++ prints every exception it raises, even ones we catch."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
