"""Crash-safe file writes (a reader, or a resumed run, never sees a half-written file), text and JSON Lines
files read with one-line errors naming the file and line, untrusted files read within bounds
(``read_bounded``: the size checked before a byte is read; ``check_npz``: an archive's members, sizes
and array headers from its directory; ``loads_bounded``: JSON whose numbers, strings and nesting are bounded), a resumable run's append-only record file read back after a crash, the one check
every resumable run directory makes of its ``config.json``, and ``quiet_stderr`` (file descriptor 2 silenced
while OpenSpiel's C++ prints exceptions we catch)."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import math
import os
import stat
import sys
import threading
import zipfile
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import numpy as np

from cwm.types import CwmError

T = TypeVar("T")


class TextFileError(CwmError, ValueError):
    """A text file that is not UTF-8; the message names the file, the line and the column."""


class InputLimitError(CwmError, ValueError):
    """An untrusted file, or a value in it, over one of its bounds; the message names the file and the bound."""


# Bounds of untrusted JSON (a bundle's, a run directory's, a results folder's), each far above what cwm writes:
MAX_JSON_DEPTH = 100  # a state may nest 64 levels (cwm.json_values.MAX_DEPTH), a record a few around it
MAX_INT_DIGITS = 4_300  # Python's own bound on str -> int; every int cwm writes has fewer (MAX_INT_BITS)
MAX_STRING_CHARS = 1 << 20  # one string: sources, prompts and renderings are far shorter
# A run directory's JSON files (config, result, labels): a result holds a program and its history.
RUN_FILE_BYTES = 64 << 20
RECORDS_BYTES = 1 << 30  # an append-only record file (matches.jsonl: a million rows of 1 KB)


def read_bounded(path: Path, limit: int, *, what: str, follow: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, which must hold at most ``limit`` bytes.

    The size is taken from the open file before anything is read (a sparse file of gigabytes is refused
    without reading, hashing or allocating it), and no more than ``limit`` bytes are ever read (a file that
    grows meanwhile is refused too).

    Args:
      limit: the most bytes the file may hold.
      what: what the file is, for the error ("policy file").
      follow: follow a symbolic link at ``path`` (``False``: a link is refused, as in a bundle's folder).

    Raises:
      InputLimitError: larger than ``limit``, not a regular file (a FIFO would block the read), or a link
        when ``follow`` is false.
      OSError: the file cannot be read.
    """
    with open_bounded(path, limit, what=what, follow=follow) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise InputLimitError(f"{what} {path}: {len(data):,} bytes, over its limit of {limit:,} bytes")
    return data


@contextlib.contextmanager
def open_bounded(path: Path, limit: int, *, what: str, follow: bool = True) -> Iterator[BinaryIO]:
    """The regular file at ``path`` open for reading, checked on the open file itself to hold at most
    ``limit`` bytes (what is checked is what is read: a FIFO swapped in after a check of the path neither
    blocks nor passes).

    Raises:
      InputLimitError: larger than ``limit``, not a regular file, or a link when ``follow`` is false.
      OSError: the file cannot be opened.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP and not follow:
            raise InputLimitError(f"{what} {path}: a symbolic link, not a plain file") from None
        raise
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode) or found.st_size > limit:
        os.close(fd)
        why = "not a regular file" if not stat.S_ISREG(found.st_mode) else \
            f"{found.st_size:,} bytes, over its limit of {limit:,} bytes"
        raise InputLimitError(f"{what} {path}: {why}")
    with os.fdopen(fd, "rb") as f:
        yield f


@dataclasses.dataclass(frozen=True)
class ArchiveBounds:
    """What the directory of an untrusted ``.npz`` archive may list (``check_npz``).

    Attributes:
      kind: what the archive is, for the errors ("policy file").
      allowed: whether a member's name (its ``.npy`` suffix removed) is one the archive may hold.
      holds: the names ``allowed`` admits, in words ("a policy holds only config, w1, ...").
      max_members: the most members.
      member_bytes: the most bytes one member inflates to.
      total_bytes: the most bytes all members inflate to.
    """

    kind: str
    allowed: Callable[[str], bool]
    holds: str
    max_members: int
    member_bytes: int
    total_bytes: int


def check_npz(file: BinaryIO, bounds: ArchiveBounds, *, where: str) -> None:
    """Checks an ``.npz`` archive from its zip directory and its arrays' headers, inflating no array: at most
    ``bounds.max_members`` members, each named once with a name ``bounds.allowed`` admits, each and all within
    their inflated sizes, and each array's header declaring no more data than its member holds (``np.load``
    would otherwise allocate what a forged header declares).

    Args:
      file: the archive, open for reading (left at an unknown position).
      where: the archive's name in every error.

    Raises:
      InputLimitError: not a zip archive, or a member over a bound, of another name, or whose header lies.
    """
    try:
        with zipfile.ZipFile(file) as archive:
            members = archive.infolist()
            _check_members(members, bounds, where)
            for member in members:
                _check_header(archive, member, where)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, NotImplementedError) as e:
        if isinstance(e, InputLimitError):
            raise
        raise InputLimitError(f"{where}: not a readable {bounds.kind} ({e})") from None


def _check_members(members: list[zipfile.ZipInfo], bounds: ArchiveBounds, where: str) -> None:
    names = [m.filename for m in members]
    if len(names) > bounds.max_members:
        raise InputLimitError(f"{where}: the archive lists {len(names):,} members, more than a {bounds.kind} "
                              f"holds ({bounds.max_members:,})")
    if len(set(names)) != len(names) or not all(n.endswith(".npy") and bounds.allowed(n[:-4]) for n in names):
        raise InputLimitError(f"{where}: the archive lists {sorted(names)[:20]!r:.300}; {bounds.holds} (as .npy)")
    total = sum(m.file_size for m in members)
    largest = max(members, key=lambda m: m.file_size, default=None)
    if largest is not None and (largest.file_size > bounds.member_bytes or total > bounds.total_bytes):
        raise InputLimitError(f"{where}: member {largest.filename!r} inflates to {largest.file_size:,} bytes "
                              f"({total:,} in all); a {bounds.kind}'s arrays hold at most "
                              f"{bounds.member_bytes:,} bytes each, {bounds.total_bytes:,} in all")


def _check_header(archive: zipfile.ZipFile, member: zipfile.ZipInfo, where: str) -> None:
    """An array's ``.npy`` header (read from the member's first bytes) declares no more data than it holds."""
    with archive.open(member) as f:
        version = np.lib.format.read_magic(f)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(f, max_header_size=10_000)
    count = 1
    for n in shape:
        count *= n
    if count * dtype.itemsize > member.file_size:
        raise InputLimitError(f"{where}: member {member.filename!r} declares an array of shape {shape!r:.80} "
                              f"({count * dtype.itemsize:,} bytes) but holds {member.file_size:,} bytes")


class _Bound(Exception):
    """A bound broken inside the JSON parser's hooks (turned into an ``InputLimitError`` naming the file)."""


def _parse_int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise _Bound(f"an integer of {digits:,} digits (at most {MAX_INT_DIGITS:,})")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Bound(f"the number {text[:40]} is not finite")
    return value


def _no_constant(text: str) -> float:
    raise _Bound(f"{text} is not a JSON number")


def loads_bounded(data: bytes | str, *, where: str, allow_nan: bool = False) -> Any:
    """The JSON value in ``data`` (read from ``where``), within the bounds above: integers of at most
    ``MAX_INT_DIGITS`` digits, strings and keys of at most ``MAX_STRING_CHARS`` characters, at most
    ``MAX_JSON_DEPTH`` levels of nesting; ``NaN``, ``Infinity`` and numbers too large for a float only with
    ``allow_nan``.

    Raises:
      InputLimitError: a bound broken (names ``where`` and the bound).
      json.JSONDecodeError: not JSON; UnicodeDecodeError: ``bytes`` that are not UTF-8.
      RecursionError: nested too deeply for the parser itself.
    """
    try:
        return _loads(data, allow_nan)
    except _Bound as e:
        raise InputLimitError(f"{where}: {e}") from None


def _loads(data: bytes | str, allow_nan: bool) -> Any:
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if allow_nan:
        value = json.loads(text, parse_int=_parse_int)
    else:
        value = json.loads(text, parse_int=_parse_int, parse_float=_finite_float, parse_constant=_no_constant)
    _check_shape(value)
    return value


def _check_shape(value: Any) -> None:
    """Walks a parsed JSON value (without recursion) for its depth and the length of its strings and keys."""
    if type(value) is str and len(value) > MAX_STRING_CHARS:
        raise _Bound(f"a string of {len(value):,} characters (at most {MAX_STRING_CHARS:,})")
    stack = [(value, 1)] if type(value) in (list, dict) else []
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise _Bound(f"nested more than {MAX_JSON_DEPTH} levels deep")
        if type(item) is dict:
            if any(len(k) > MAX_STRING_CHARS for k in item):
                raise _Bound(f"a key of more than {MAX_STRING_CHARS:,} characters")
            item = item.values()
        for child in item:
            kind = type(child)
            if kind is str:
                if len(child) > MAX_STRING_CHARS:
                    raise _Bound(f"a string of {len(child):,} characters (at most {MAX_STRING_CHARS:,})")
            elif kind is list or kind is dict:
                stack.append((child, depth + 1))


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


def not_a_file(path: Path | str, what: str) -> str:
    """Why ``path`` cannot be read as ``what`` (a one-line reason naming it), or ``""`` when it is a file.

    A directory is called a directory and a missing path missing, so a user who typed a folder where a file
    belongs is told so instead of being told that it does not exist."""
    path = Path(path)
    if path.is_file():
        return ""
    if path.is_dir():
        return f"{what} {str(path)!r} is a directory, not a file"
    if path.exists():
        return f"{what} {str(path)!r} is not a regular file"
    return f"{what} {str(path)!r} does not exist"


def read_text(path: Path, *, what: str = "file", limit: int = RUN_FILE_BYTES) -> str:
    """The text of a UTF-8 file, line ends made ``\\n`` (as ``Path.read_text`` makes them).

    Args:
      what: what the file is, for the error ("rules file").
      limit: the most bytes the file may hold (checked before it is read, ``read_bounded``).

    Raises:
      TextFileError: the file is not UTF-8 text (names the file, the line and the column of the first
        byte that is not).
      InputLimitError: the file is larger than ``limit``, or not a regular file.
      OSError: the file cannot be read.
    """
    data = read_bounded(Path(path), limit, what=what)
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
      InputLimitError: the file is larger than ``RECORDS_BYTES``.
    """
    if not path.exists():
        return []
    data = read_bounded(path, RECORDS_BYTES, what="record file")
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
        return parse(_loads(line, allow_nan=True))
    except _Bound as e:
        why = str(e)
    except RecursionError:
        why = "nested too deeply"
    except UnicodeDecodeError as e:
        why = f"not UTF-8 text: byte {line[e.start]:#04x} at column {e.start + 1}"
    except json.JSONDecodeError as e:
        why = f"not JSON: {e.msg} at column {e.colno}"
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        why = f"{type(e).__name__}: {e}"
    raise LineError(f"{path}:{number}: not {what} ({why})")


def changed_settings(path: Path, config: Mapping[str, Any], *, ignore: Collection[str] = ()) -> list[str]:
    """The settings that differ between a run directory's stored ``config.json`` (at ``path``) and
    ``config``: ``differing_keys`` of the two, none when there is no such file.

    Raises:
      InputLimitError: the stored file is over ``RUN_FILE_BYTES`` or its JSON over a bound of ``loads_bounded``.
    """
    if not path.is_file():
        return []
    stored = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="run settings"), where=str(path))
    return differing_keys(stored, config, ignore=ignore)


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
