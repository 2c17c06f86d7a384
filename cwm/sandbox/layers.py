"""The layers a sandbox child puts between candidate code and the machine, each usable on its own.

In the order the child applies them: a new process group that dies with the zygote, file descriptors
reduced to /dev/null and the result pipe, resource limits, an audit hook, a seccomp deny-list, restricted
builtins for the candidate module (with the module views of ``cwm.sandbox.imports``), and a check afterwards
that the harness was not tampered with (``cwm.sandbox.tamper``).
None of these is a kernel boundary on its own; bubblewrap around the zygote adds namespaces (see
docs/security.md).
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import ctypes.util
import errno
import io
import linecache
import logging
import os
import resource
import signal
import sys
import types
from typing import Any

from cwm.contract import source_lines
from cwm.sandbox.builders import checked_build_class, checked_type, install_codegen_guard
from cwm.sandbox.imports import make_importer
from cwm.sandbox.names import (
    ALLOWED_IMPORTS,
    ALLOWED_SUBMODULES,
    FORBIDDEN_NAMES,
    PYTHON_POLICY,
    ImportPolicy,
)
from cwm.sandbox.tamper import baseline, leftovers, remember_baseline, snapshot, tampering

__all__ = ["baseline", "leftovers", "snapshot", "tampering"]  # the tamper check, re-exported for the child

try:
    import pyseccomp
except (ImportError, OSError):  # libseccomp missing: the layer is reported as absent
    pyseccomp = None

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
log = logging.getLogger("cwm.sandbox")
_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
STDOUT_CAP_CHARS = 64 << 10
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_BLOCKED_EVENTS = frozenset({
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill", "os.killpg",
    "subprocess.Popen", "pty.spawn", "os.remove", "os.rmdir", "os.rename", "os.mkdir", "os.chmod", "os.chown",
    "os.chdir", "os.truncate", "os.link", "os.symlink", "os.putenv", "os.unsetenv", "os.chflags", "os.utime",
    "os.scandir", "sys._current_frames", "sys.settrace", "sys.setprofile", "sys.addaudithook",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "signal.pthread_kill",
    "_thread.start_new_thread", "resource.setrlimit", "resource.prlimit", "mmap.__new__", "webbrowser.open",
    "sqlite3.connect", "tempfile.mkstemp", "tempfile.mkdtemp", "code.__new__", "function.__new__",
})
_BLOCKED_PREFIXES = ("socket.", "ctypes.", "shutil.", "urllib.", "http.", "ftplib.", "smtplib.", "imaplib.")
# Syscalls a game model never needs; each fails with EPERM (ENOSYS for clone3 so glibc falls back to clone,
# whose flags seccomp can inspect).
DENIED_SYSCALLS = (
    "execve", "execveat", "fork", "vfork", "socket", "socketpair", "connect", "bind", "listen", "accept",
    "accept4", "ptrace", "process_vm_readv", "process_vm_writev", "kill", "tkill", "mount", "umount2",
    "pivot_root", "chroot", "setns", "unshare", "setrlimit", "prlimit64", "unlink", "unlinkat", "rename",
    "renameat", "renameat2", "rmdir", "mkdir", "mkdirat", "chmod", "fchmod", "fchmodat", "chown", "fchown",
    "lchown", "fchownat", "link", "linkat", "symlink", "symlinkat", "truncate", "ftruncate", "mknod",
    "mknodat", "creat", "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
    "userfaultfd", "keyctl", "add_key", "request_key", "init_module", "finit_module", "delete_module",
    "kexec_load", "reboot", "swapon", "swapoff", "acct", "name_to_handle_at", "open_by_handle_at",
    "memfd_create", "personality",
    # Reaching other processes by pidfd or by queued signal: stop or kill the host, copy its file descriptors
    # (the zygote's reply pipe), compare or advise on its memory.
    "pidfd_open", "pidfd_getfd", "pidfd_send_signal", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
    "process_madvise", "kcmp",
)

_READ_PREFIXES: tuple[str, ...] = ()
_RESTRICTED_BUILTINS: dict[str, Any] = {}
_FILTER: Any = None
_WARNED_NO_SECCOMP: list[bool] = []  # mutated, never rebound (the module is watched for tampering)


def prepare_zygote() -> None:
    """Computes, once, what every child needs: readable prefixes and the restricted builtins."""
    global _READ_PREFIXES, _RESTRICTED_BUILTINS, _FILTER
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # cwm's own folder
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, package}
    roots |= {p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)}
    _READ_PREFIXES = tuple(sorted(os.path.join(os.path.abspath(r), "") for r in roots if r))
    _RESTRICTED_BUILTINS = restricted_builtins()
    install_codegen_guard()  # every child inherits the hook
    for name in sorted(ALLOWED_IMPORTS | ALLOWED_SUBMODULES):  # every child inherits the views built
        _RESTRICTED_BUILTINS["__import__"](name)
    _FILTER = build_seccomp_filter()
    remember_baseline(tuple(_RESTRICTED_BUILTINS.values()))


def restricted_builtins() -> dict[str, Any]:
    """A fresh builtins dict for candidate code: none of the gate's ``FORBIDDEN_NAMES``, and an
    ``__import__`` (``cwm.sandbox.imports.make_importer``) that imports only allow-listed modules and hands
    out public-only views of them, a ``type`` that checks the namespace of a class built by calling a
    metaclass (``cwm.sandbox.builders.checked_type``) and a ``__build_class__`` that refuses a class
    statement making a metaclass (``checked_build_class``). Used by sandbox children and by
    ``cwm.sandbox.load_source``."""
    # ``class`` statements call __build_class__: the gate forbids naming it, the builtins must keep it.
    allowed = {k: v for k, v in vars(builtins).items() if k not in FORBIDDEN_NAMES or k == "__build_class__"}
    allowed["__import__"] = make_importer()
    allowed["type"] = checked_type
    allowed["__build_class__"] = checked_build_class
    return allowed


# A JAX twin's child runs XLA on the CPU only, one device, Eigen single-threaded, with no compilation cache on disk
# (XLA still starts a few threads of its own: every one of them gets the process's layers, ``prepare_jax``).
JAX_ENVIRONMENT = {
    "JAX_PLATFORMS": "cpu",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false --xla_force_host_platform_device_count=1",
    "JAX_ENABLE_COMPILATION_CACHE": "false",
    "TF_CPP_MIN_LOG_LEVEL": "3",
}


def prepare_jax() -> None:
    """Imports JAX and starts its CPU backend in this (forked, not yet hardened) child, before the layers go
    up: XLA starts its threads and reads the machine's description now, which the process limit (no new
    tasks), seccomp and the audit hook would refuse later; a first computation is compiled and run so the
    compiler is loaded too. The candidate then imports only what is in ``sys.modules`` already. numpy's global
    generator, which importing JAX draws from, is put back as the zygote left it (the tamper check compares
    it). The capability sets are emptied first, so the threads XLA starts inherit none (a thread's
    capabilities are its own: the later ``drop_capabilities`` reaches only the thread that calls it); seccomp
    reaches them through ``install_seccomp``'s thread synchronisation."""
    import numpy as np

    drop_capabilities()
    kept = np.random.get_state()
    os.environ.update(JAX_ENVIRONMENT)
    import jax
    import jax.lax
    import jax.numpy as jnp
    import jax.random

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_compilation_cache", False)
    key = jax.random.PRNGKey(0)
    jax.block_until_ready(jax.jit(lambda k: jax.random.categorical(k, jnp.zeros(3)) + jax.lax.max(1, 2))(key))
    np.random.set_state(kept)


def layers_available() -> dict[str, bool]:
    return {"seccomp": pyseccomp is not None, "audit_hook": True, "rlimits": True}


def die_with_parent() -> None:
    """Asks the kernel to SIGKILL this process when its parent dies (Linux ``PR_SET_PDEATHSIG``)."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def not_dumpable() -> None:
    """Marks this process (and the children it forks) non-dumpable: processes of the same user can then no
    longer open its /proc/PID/fd, /proc/PID/mem or /proc/PID/environ, nor attach to it."""
    _LIBC.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def drop_capabilities() -> bool:
    """Empties this process's capability sets (``capset``): a child started as root keeps uid 0 but loses
    ``CAP_SYS_PTRACE``, ``CAP_DAC_OVERRIDE``, ``CAP_KILL`` and the rest, so the non-dumpable zygote and files
    it cannot read stay out of reach.

    Returns:
      Whether the sets were emptied.
    """
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable for capabilities 0-31 and 32-63
    return _LIBC.capset(header, data) == 0


def warn_once_without_seccomp() -> None:
    """Logs one warning per process when libseccomp (pyseccomp) is unavailable: the children then run
    without the syscall deny-list."""
    if pyseccomp is None and not _WARNED_NO_SECCOMP:
        _WARNED_NO_SECCOMP.append(True)
        log.warning("libseccomp is unavailable (pyseccomp could not load it): sandboxed code runs without the "
                    "seccomp deny-list; install Debian's 'libseccomp2'")


class _Sink(io.TextIOBase):
    """A stdout/stderr replacement that keeps the first ``STDOUT_CAP_CHARS`` characters and drops the rest."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.size < STDOUT_CAP_CHARS:
            self.kept.append(text[: STDOUT_CAP_CHARS - self.size])
        self.size += len(text)
        return len(text)


def detach(*, keep: tuple[int, ...]) -> None:
    """Own process group; dies with the zygote; fds 0-2 on /dev/null; every other fd but ``keep`` closed."""
    os.setpgid(0, 0)
    die_with_parent()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)
    sys.stdout = sys.stderr = _Sink()
    sys.stdin = io.StringIO()


def set_rlimits(limits: dict[str, float]) -> None:
    """Address space (current size + ``memory_mb``), CPU seconds, no file growth, no cores, no new processes."""
    with open("/proc/self/statm") as f:
        current = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    space = current + int(limits["memory_mb"]) * (1 << 20)
    cpu = max(1, int(-(-limits["cpu_s"] // 1)))
    for which, value in ((resource.RLIMIT_AS, (space, space)), (resource.RLIMIT_CPU, (cpu, cpu + 1)),
                         (resource.RLIMIT_FSIZE, (0, 0)), (resource.RLIMIT_CORE, (0, 0)),
                         (resource.RLIMIT_NOFILE, (32, 32)), (resource.RLIMIT_NPROC, (0, 0))):
        resource.setrlimit(which, value)


def set_batch_rlimits() -> None:
    """A batch child's limits (``cwm.sandbox.child.batch_main``): no file growth, no cores, no new processes,
    32 files, as ``set_rlimits``; the address space and CPU seconds are set by the zygote before each job
    (``job_rlimits``), measured from what the child holds and has used when the job starts."""
    for which, value in ((resource.RLIMIT_FSIZE, (0, 0)), (resource.RLIMIT_CORE, (0, 0)),
                         (resource.RLIMIT_NOFILE, (32, 32)), (resource.RLIMIT_NPROC, (0, 0))):
        resource.setrlimit(which, value)


def job_rlimits(pid: int, limits: dict[str, float], cpu_used: float) -> None:
    """Sets, from outside (the zygote), a batch child's limits for its next job as ``set_rlimits`` sets a
    fresh child's: address space its current size + ``memory_mb``, CPU seconds ``cpu_s`` more than it has
    used (whole seconds, as the kernel counts them).

    Raises:
      OSError: the limits could not be set (then the child must not run the job).
    """
    with open(f"/proc/{pid}/statm") as f:
        current = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    space = current + int(limits["memory_mb"]) * (1 << 20)
    cpu = max(1, int(-(-(cpu_used + limits["cpu_s"]) // 1)))
    for which, value in ((resource.RLIMIT_AS, space), (resource.RLIMIT_CPU, cpu)):
        hard = resource.prlimit(pid, which)[1]
        if hard != resource.RLIM_INFINITY and hard < value:
            raise OSError(f"the child's hard limit {hard} is below {value}")
        resource.prlimit(pid, which, (value, hard))


def remember_source(filename: str, source: str) -> None:
    """Puts the candidate's lines in linecache, so tracebacks shown to the LLM quote its own code."""
    linecache.cache[filename] = (len(source), None, source_lines(source), filename)


def _readable(path: Any) -> bool:
    return _make_readable(_READ_PREFIXES)(path)


def _make_readable(prefixes: tuple[str, ...]) -> Any:
    """A path check bound to ``prefixes`` that uses only str/bytes methods, never a module attribute the
    candidate could replace (``os.path.abspath``): relative paths are refused, ``.``/``..`` resolved."""
    str_, bytes_, isinstance_ = str, bytes, isinstance

    def readable(path: Any) -> bool:
        if isinstance_(path, bytes_):
            path = path.decode("utf-8", "surrogateescape")
        if not isinstance_(path, str_) or not path.startswith("/"):
            return False
        parts: list[str] = []
        for part in path.split("/"):
            if part == "..":
                parts[-1:] = []
            elif part and part != ".":
                parts.append(part)
        full = "/" + "/".join(parts)
        return full.startswith(prefixes) or (full + "/") in prefixes

    return readable


def install_audit_hook() -> None:
    """Refuses process, network, file-changing and introspection events; reads only under the interpreter's
    and cwm's directories (lazy imports keep working). ``compile``/``exec`` stay allowed: dataclasses,
    namedtuple and enum generate code with them (the candidate itself has no ``eval``/``exec``).

    Everything the hook consults is bound into its closure here: it reads no module global at call time, so
    a candidate that reaches this module's ``__dict__`` cannot switch it off.
    """
    blocked, prefixes, write_flags = frozenset(_BLOCKED_EVENTS), tuple(_BLOCKED_PREFIXES), _WRITE_FLAGS
    readable = _make_readable(tuple(_READ_PREFIXES))
    str_, int_, isinstance_, denied = str, int, isinstance, PermissionError

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in blocked or event.startswith(prefixes):
            raise denied(f"sandbox: {event} is not allowed")
        if event == "open":
            path, mode, flags = args
            writing = (isinstance_(flags, int_) and flags & write_flags) or (
                isinstance_(mode, str_) and ("w" in mode or "a" in mode or "x" in mode or "+" in mode))
            if writing or not readable(path):
                raise denied(f"sandbox: opening {path!r} is not allowed")
        elif event == "os.listdir" and not readable(args[0]):
            raise denied(f"sandbox: listing {args[0]!r} is not allowed")

    sys.addaudithook(hook)


def build_seccomp_filter() -> Any:
    """The deny-list as an unloaded libseccomp filter (built once in the zygote: building costs ~2 ms), or
    ``None`` when libseccomp is unavailable. Threads may still be created (``clone`` with
    ``CLONE_THREAD``), processes may not."""
    if pyseccomp is None:
        warn_once_without_seccomp()
        return None
    sc = pyseccomp
    f = sc.SyscallFilter(sc.ALLOW)
    deny = sc.ERRNO(errno.EPERM)
    for name in DENIED_SYSCALLS:
        with contextlib.suppress(OSError, ValueError, RuntimeError):  # a syscall this architecture lacks
            f.add_rule(deny, name)
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    f.add_rule(sc.ERRNO(errno.ENOSYS), "openat2")
    f.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, 0x10000, 0))  # CLONE_THREAD not set: a new process
    for bit in (os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_TRUNC, os.O_APPEND):
        f.add_rule(deny, "open", sc.Arg(1, sc.MASKED_EQ, bit, bit))
        f.add_rule(deny, "openat", sc.Arg(2, sc.MASKED_EQ, bit, bit))
    return f


def install_seccomp() -> bool:
    """Loads the deny-list into this process, plus: signals only to itself (``tgkill``). The filter is
    synchronised to every thread of the process (``SECCOMP_FILTER_FLAG_TSYNC``), not only the calling one: a
    JAX twin's child has XLA's threads running already, and its compiled code runs on them.

    Returns:
      Whether a filter was loaded (``False`` when libseccomp is unavailable).
    """
    f = _FILTER if _FILTER is not None else build_seccomp_filter()
    if f is None:
        return False
    f.add_rule(pyseccomp.ERRNO(errno.EPERM), "tgkill", pyseccomp.Arg(0, pyseccomp.NE, os.getpid()))
    f.set_attr(pyseccomp.Attr.CTL_TSYNC, 1)
    f.load()
    return True


def exec_module(code: types.CodeType, name: str, source: str, fresh_views: bool = False,
                policy: ImportPolicy = PYTHON_POLICY) -> types.ModuleType:
    """Runs compiled candidate code in a fresh module whose builtins are the restricted set. ``fresh_views``:
    with an importer of its own (``make_importer``), not the views the zygote built for its children (a later
    job of a batch child, where an earlier candidate may have written to those views); always so for a
    ``policy`` other than Python's (a JAX twin's)."""
    module = types.ModuleType(name)
    module.__dict__["__builtins__"] = dict(_RESTRICTED_BUILTINS)
    if fresh_views or policy is not PYTHON_POLICY:
        module.__dict__["__builtins__"]["__import__"] = make_importer(policy)
    module.__dict__["__source__"] = source
    sys.modules[name] = module  # dataclasses look their class's module up there
    exec(code, module.__dict__)
    return module
