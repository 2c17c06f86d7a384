"""A run directory's writer lock: one process at a time plays a tournament or runs the main job into a folder.

The writer holds ``fcntl.flock`` on ``DIR/.cwm-lock`` (the file keeps the holder's pid, for the message a
second writer gets); the kernel drops the lock when the holder ends, however it ends (a crash, a SIGKILL),
so a stale file never blocks anyone. Processes the holder forks (its pool workers) do not keep it. Readers (``cwm replay``, ``cwm view``, the reports) take no lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from cwm.types import CwmError

LOCK_NAME = ".cwm-lock"
_HELD: dict[Path, tuple[int, int, int]] = {}  # folder -> (fd, depth, pid): a process may nest its own lock


def _forget_in_child() -> None:
    """A forked child (a pool worker) closes its copies of the parent's lock files, so a lock is its holder's
    alone and ends the moment the holder does (closing a copy leaves the holder's lock in place)."""
    for fd, _, _ in _HELD.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_forget_in_child)


class DirectoryInUse(CwmError, RuntimeError):
    """A folder another process is writing (its pid in the message)."""


@contextlib.contextmanager
def writer_lock(directory: str | Path) -> Iterator[None]:
    """Holds ``directory``'s writer lock (creating the folder) while the block runs; re-entrant in one process.

    Raises:
      DirectoryInUse: another process holds it; nothing was written (the folder and lock file may have been
        made).
    """
    path = Path(directory).resolve()
    held = _HELD.get(path)
    if held is not None and held[2] == os.getpid():
        _HELD[path] = (held[0], held[1] + 1, held[2])
        try:
            yield
        finally:
            fd, depth, pid = _HELD[path]
            _HELD[path] = (fd, depth - 1, pid)
        return
    path.mkdir(parents=True, exist_ok=True)
    fd = _open(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        holder = _holder(fd)
        os.close(fd)
        if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise
        raise _in_use(path, holder) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    _HELD[path] = (fd, 1, os.getpid())
    try:
        yield
    finally:
        _HELD.pop(path, None)
        fcntl.flock(fd, fcntl.LOCK_UN)  # also for forked workers sharing the open file
        os.close(fd)


def refuse_if_locked(directory: str | Path) -> None:
    """Raises ``DirectoryInUse`` when another process holds ``directory``'s lock, or its lock file is not a
    regular file; creates nothing (a command asks before its slow preparations, such as a cost estimate; the
    writer then takes the lock itself)."""
    path = Path(directory).resolve()
    held = _HELD.get(path)
    if (held is not None and held[2] == os.getpid()) or not os.path.lexists(path / LOCK_NAME):
        return
    fd = _open(path, write=False)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _in_use(path, _holder(fd)) from None
    finally:
        os.close(fd)  # closing drops the shared lock taken to ask


def _open(path: Path, *, write: bool = True) -> int:
    """The lock file open; a link or anything but a regular file there (a FIFO, a device) is refused in one
    line, since it can neither hold a pid nor be trusted to lock."""
    # no link followed (a lock file in a shared folder could point anywhere), and a FIFO there does not block
    mode = os.O_RDWR | os.O_CREAT if write else os.O_RDONLY
    try:
        fd = os.open(path / LOCK_NAME, mode | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as e:
        if e.errno not in (errno.ELOOP, errno.EISDIR):
            raise
        raise _not_a_lock(path, "a symbolic link" if e.errno == errno.ELOOP else "a folder") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _not_a_lock(path, "not a regular file")
    return fd


def _not_a_lock(path: Path, what: str) -> DirectoryInUse:
    return DirectoryInUse(f"{path / LOCK_NAME} is {what}, so the folder cannot be locked for writing; remove it, "
                          f"or write to another --out")


def _holder(fd: int) -> str:
    """The pid the lock file names (its first 32 bytes), or ``unknown``."""
    with contextlib.suppress(OSError):
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return text
    return "unknown"


def _in_use(path: Path, holder: str) -> DirectoryInUse:
    return DirectoryInUse(f"{path} is being written by another cwm process (pid {holder}); wait for it to end, "
                          f"or write to another --out")
