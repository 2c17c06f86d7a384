"""Adding files to a verified bundle after export, atomically: a reader finds the bundle as it was or complete,
never half-written, at every instant and after a crash at any step.

An update writes the whole new bundle (the verified files, the new ones, the re-hashed manifest) into a staging
folder beside it (``.NAME.cwm-update-TOKEN``), flushes it to the disk, and exchanges the two folders in one
step (Linux ``renameat2`` with ``RENAME_EXCHANGE``, macOS ``renamex_np`` with ``RENAME_SWAP``); the staging
folder, which then holds the old bundle, is removed. Where the file system cannot exchange folders (NFS, for
one), the swap is two renames: the bundle is moved aside to ``.NAME.cwm-old`` (``cwm.bundle.files.displaced``)
and the new one into its place, and every reader (``cwm.bundle.files.read_manifest``) that finds no bundle
between the two moves the old one back. An update holds an exclusive lock on the bundle folder (``flock``),
so a second update started meanwhile fails at once with a ``BundleError``; the next update removes the
staging folders an interrupted one left.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import json
import os
import re
import secrets
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

from cwm.bundle.files import (
    ALLOWED_FILES,
    MANIFEST,
    BundleError,
    displaced,
    provenance_hash,
    read_manifest,
    sha256,
    verified_files,
)
from cwm.types import JSON

ENCODER_FILE = "encoder.py"
_STAGING = ".cwm-update-"  # a staging folder is ".NAME" + _STAGING + 16 hex digits, beside the bundle
_AT_FDCWD = -100  # Linux <fcntl.h>
_RENAME_EXCHANGE = 2  # Linux <linux/fs.h>
_RENAME_SWAP = 2  # macOS <stdio.h>
_CANNOT_EXCHANGE = frozenset({errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP})


def update_bundle(bundle: str | Path, writes: Mapping[str, bytes], *, remove: Iterable[str] = (),
                  provenance_key: str, provenance: dict[str, JSON]) -> Path:
    """Writes ``writes`` (file name -> bytes) into ``bundle``, drops the files ``remove``, and records
    ``provenance`` as the manifest's ``provenance[provenance_key]``, with every hash updated.

    The new bundle is written complete beside the old one and swapped into its place in one step (see the
    module's docstring): whatever happens, the folder holds the old bundle or the new one, complete.

    Returns:
      ``bundle``, as a path.

    Raises:
      BundleError: not a bundle, one whose files do not match its manifest (checked before any write), a
        file name a bundle may not hold, or another update of the bundle under way.
      OSError: writing, flushing or swapping in the new bundle failed (the bundle is the old one, or the new
        one where only flushing the swap to the disk failed).
    """
    path = Path(bundle)
    names = {*writes, *remove}
    if not names <= ALLOWED_FILES:
        raise BundleError(f"{path}: a bundle may not hold {sorted(names - ALLOWED_FILES)}")
    real = path.resolve()
    with _locked(path, real):
        manifest = read_manifest(path)
        files = verified_files(path, manifest)
        for leftover in _leftovers(real):
            shutil.rmtree(leftover, ignore_errors=True)
        contents = _updated(manifest, files, writes, remove, provenance_key, provenance)
        staged = real.with_name(f".{real.name}{_STAGING}{secrets.token_hex(8)}")
        try:
            _new_folder(staged, like=real)
            for name, data in contents.items():
                _write_file(staged / name, data)
            _sync_folder(staged)
            _swap(staged, real)
            _sync_folder(real.parent)
        finally:
            shutil.rmtree(staged, ignore_errors=True)  # the unfinished new bundle or, once swapped, the old one
    return path


def save_encoder(bundle: str | Path, source: str, provenance: dict[str, JSON]) -> Path:
    """Writes an accepted observation encoder into ``bundle`` as ``encoder.py`` (replacing an older one), with
    what produced it as the manifest's ``provenance.encoder``.

    Raises:
      BundleError: not a bundle, one whose files do not match its manifest, or another update under way.
      OSError: the new bundle could not be written (see ``update_bundle``).
    """
    return update_bundle(bundle, {ENCODER_FILE: source.encode("utf-8")}, provenance_key="encoder",
                         provenance=provenance)


def _updated(manifest: dict[str, JSON], files: Mapping[str, bytes], writes: Mapping[str, bytes],
             remove: Iterable[str], provenance_key: str, provenance: dict[str, JSON]) -> dict[str, bytes]:
    """Every file of the new bundle, its manifest last (a file both written and removed is written)."""
    gone = set(remove) - set(writes)
    contents = {name: data for name, data in files.items() if name not in gone} | dict(writes)
    record = {**manifest["provenance"], provenance_key: provenance}  # type: ignore[dict-item]
    new = {**manifest, "files": {name: sha256(data) for name, data in contents.items()}, "provenance": record,
           "provenance_sha256": provenance_hash(record)}
    return contents | {MANIFEST: json.dumps(new, indent=2, sort_keys=True).encode("utf-8")}


@contextmanager
def _locked(path: Path, real: Path) -> Iterator[None]:
    """Holds an exclusive ``flock`` on the folder at ``real`` (released when the process ends, however it
    ends). An update swaps another folder into place, so a lock taken on a folder that is no longer there
    (an update finished in between) is dropped and taken again on the one that is.

    Raises:
      BundleError: not a bundle, or another update holds the lock.
    """
    for _ in range(3):
        try:
            fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            read_manifest(path)  # says what is wrong, or puts back a bundle an interrupted update displaced
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BundleError(f"{path}: another update of this bundle is under way; try again when it has "
                                  f"finished") from None
            if _same_folder(fd, real):
                yield
                return
        finally:
            os.close(fd)
    raise BundleError(f"{path}: the bundle was replaced again and again while this update started; try again")


def _same_folder(fd: int, real: Path) -> bool:
    try:
        here = os.stat(real)
    except OSError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (here.st_dev, here.st_ino)


def _leftovers(real: Path) -> list[Path]:
    """The staging folders and the displaced bundle interrupted updates of ``real`` left beside it (only ever
    removed by an update holding the lock on the bundle that is in place, so none is in use)."""
    staging = re.compile(re.escape(f".{real.name}{_STAGING}") + "[0-9a-f]{16}")
    found = [real.parent / name for name in os.listdir(real.parent) if staging.fullmatch(name)]
    return [*found, displaced(real)] if os.path.lexists(displaced(real)) else found


def _new_folder(folder: Path, *, like: Path) -> None:
    """Makes the empty folder ``folder``, with the permissions of the folder ``like``."""
    os.mkdir(folder, 0o700)
    os.chmod(folder, os.stat(like).st_mode & 0o7777)


def _write_file(file: Path, data: bytes) -> None:
    """A new file holding ``data``, flushed to the disk."""
    fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_folder(folder: Path) -> None:
    """Flushes a folder's entries to the disk, so a rename in it survives a power cut."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _swap(staged: Path, real: Path) -> None:
    """Puts the folder ``staged`` at ``real``: in one step where the system can exchange two folders (the old
    bundle is then at ``staged``), else in two renames through ``displaced(real)`` (readers put the old bundle
    back if the update stops in between), the old bundle removed after them.

    Raises:
      OSError: the swap failed; the old bundle is in place (or, after a crash, put back by the next reader).
    """
    if _exchange(staged, real):
        return
    aside = displaced(real)
    os.rename(real, aside)
    try:
        os.rename(staged, real)
    except OSError:
        with suppress(OSError):  # a reader may have put it back already
            os.rename(aside, real)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Exchanges two folders in one step; ``False`` where this system or file system cannot.

    Raises:
      OSError: the exchange failed for another reason (nothing moved).
    """
    call = _exchange_call()
    if call is None:
        return False
    if call(bytes(a), bytes(b)) == 0:
        return True
    code = ctypes.get_errno()
    if code in _CANNOT_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


@functools.cache
def _exchange_call() -> Callable[[bytes, bytes], int] | None:
    """The C library's call that exchanges two paths (it sets ``errno`` and returns -1 on failure), if any."""
    if not sys.platform.startswith(("linux", "darwin")):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):  # glibc 2.28+
        renameat2 = libc.renameat2
        renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        renameat2.restype = ctypes.c_int
        return lambda a, b: int(renameat2(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE))
    if sys.platform == "darwin" and hasattr(libc, "renamex_np"):  # macOS 10.12+
        renamex_np = libc.renamex_np
        renamex_np.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        renamex_np.restype = ctypes.c_int
        return lambda a, b: int(renamex_np(a, b, _RENAME_SWAP))
    return None


__all__ = ["ENCODER_FILE", "save_encoder", "update_bundle"]
