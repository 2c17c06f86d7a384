"""Each child layer on its own, in a forked process of the test (no zygote, no other layer helping)."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
from collections.abc import Callable

import pytest

from cwm.sandbox import layers as layers


def in_child(body: Callable[[], object]) -> object:
    """Runs ``body`` in a forked child and returns its JSON result (or the exception's type name)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            try:
                out = body()
            except BaseException as e:  # reported back to the test
                out = f"raised {type(e).__name__}"
            os.write(w, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = os.read(r, 1 << 20)
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


def attempt(action: Callable[[], object]) -> str:
    try:
        action()
        return "allowed"
    except PermissionError:
        return "EPERM"
    except OSError as e:
        return f"errno {e.errno}"


SECCOMP_PROBES: dict[str, Callable[[], object]] = {
    "execve": lambda: os.execv("/bin/true", ["true"]),
    "fork": lambda: subprocess.run(["/bin/true"], check=True),
    "socket": lambda: socket.socket(),
    "open-write": lambda: os.open("/tmp/cwm-hostile-seccomp", os.O_WRONLY | os.O_CREAT),
    "unlink": lambda: os.unlink("/tmp/cwm-hostile-does-not-matter"),
    "rename": lambda: os.rename("/tmp/a-cwm", "/tmp/b-cwm"),
    "chmod": lambda: os.chmod("/tmp", 0o777),
    "kill-other": lambda: os.kill(1, 0),
    "mkdir": lambda: os.mkdir("/tmp/cwm-hostile-dir"),
}


@pytest.mark.parametrize("probe", list(SECCOMP_PROBES), ids=list(SECCOMP_PROBES))
def test_seccomp_denies(probe: str) -> None:
    def body() -> object:
        layers.install_seccomp()
        return attempt(SECCOMP_PROBES[probe])

    assert in_child(body) == "EPERM"


def test_seccomp_still_allows_reading_and_threads() -> None:
    def body() -> object:
        import threading

        layers.install_seccomp()
        with open(sys.executable, "rb") as f:
            head = f.read(4)
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
        return head.hex()

    assert in_child(body) == "7f454c46"  # ELF


def test_rlimits_are_set() -> None:
    def body() -> object:
        layers.set_rlimits({"memory_mb": 64, "cpu_s": 1.5})
        names = ("RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_NOFILE", "RLIMIT_NPROC")
        out: dict[str, object] = {n: list(resource.getrlimit(getattr(resource, n))) for n in names}
        try:
            bytearray(200 << 20)
            out["alloc"] = "allowed"
        except MemoryError:
            out["alloc"] = "MemoryError"
        return out

    assert in_child(body) == {"RLIMIT_CPU": [2, 3], "RLIMIT_FSIZE": [0, 0], "RLIMIT_CORE": [0, 0],
                              "RLIMIT_NOFILE": [32, 32], "RLIMIT_NPROC": [0, 0], "alloc": "MemoryError"}


def test_audit_hook_blocks_events_but_not_the_interpreter() -> None:
    def body() -> object:
        layers.prepare_zygote()
        layers.install_audit_hook()
        return {
            "passwd": attempt(lambda: open("/etc/passwd").read()),
            "write-tmp": attempt(lambda: open("/tmp/cwm-hostile-audit", "w")),
            "system": attempt(lambda: os.system("true")),
            "listdir-root": attempt(lambda: os.listdir("/")),
            "stdlib-read": attempt(lambda: open(os.__file__).read(1)),
            "lazy-import": attempt(lambda: __import__("colorsys")),
        }

    assert in_child(body) == {"passwd": "EPERM", "write-tmp": "EPERM", "system": "EPERM",
                              "listdir-root": "EPERM", "stdlib-read": "allowed", "lazy-import": "allowed"}


def test_restricted_builtins_and_imports() -> None:
    layers.prepare_zygote()
    source = "import math\nx = math.sqrt(4)\nhas_open = 'open' in dir(__builtins__) if False else None\n"
    module = layers.exec_module(compile(source, "<t>", "exec"), "t", source)
    assert module.x == 2.0
    builtins_seen = module.__dict__["__builtins__"]
    assert "open" not in builtins_seen and "eval" not in builtins_seen and "getattr" not in builtins_seen
    for bad in ("import os\n", "from random import _os\n", "import numpy.ctypeslib\n"):
        with pytest.raises(ImportError, match="sandbox"):
            layers.exec_module(compile(bad, "<t>", "exec"), "t", bad)


def test_tampering_is_detected() -> None:
    import json as json_module

    before = layers.snapshot()
    assert layers.tampering(before) == ""
    original = json_module.dumps
    try:
        json_module.dumps = lambda *a, **k: "{}"
        assert layers.tampering(before) == "tampering: the model changed json.dumps"
    finally:
        json_module.dumps = original
    import random

    random.random()
    assert layers.tampering(before).startswith("nondeterminism: the model drew from the global random")


# Syscalls that reach another process (the zygote, the host) through a pidfd or a queued signal, each made
# raw through libc so that only seccomp stands between it and the kernel. Without the deny-list each would
# succeed or fail with another errno (the arguments are harmless: signal 0, empty vectors, a NULL siginfo).
SYSCALL_PROBES: dict[str, Callable[[int, int], tuple[int, ...]]] = {
    "pidfd_open": lambda pidfd, ppid: (ppid, 0),
    "pidfd_getfd": lambda pidfd, ppid: (pidfd, 0, 0),
    "pidfd_send_signal": lambda pidfd, ppid: (pidfd, 0, 0, 0),
    "rt_sigqueueinfo": lambda pidfd, ppid: (ppid, 0, 0),
    "rt_tgsigqueueinfo": lambda pidfd, ppid: (ppid, ppid, 0, 0),
    "process_madvise": lambda pidfd, ppid: (pidfd, 0, 0, 0, 0),
    "kcmp": lambda pidfd, ppid: (os.getpid(), ppid, 0, 0, 0),
}


@pytest.mark.parametrize("name", list(SYSCALL_PROBES), ids=list(SYSCALL_PROBES))
def test_seccomp_denies_reaching_other_processes(name: str) -> None:
    import ctypes

    import pyseccomp

    def body() -> object:
        libc = ctypes.CDLL(None, use_errno=True)
        pidfd = os.pidfd_open(os.getppid())
        number = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
        layers.install_seccomp()
        ret = libc.syscall(number, *SYSCALL_PROBES[name](pidfd, os.getppid()))
        return "EPERM" if ret == -1 and ctypes.get_errno() == 1 else f"returned {ret}, errno {ctypes.get_errno()}"

    assert in_child(body) == "EPERM"


def test_a_non_dumpable_process_hides_its_descriptors_and_environment_from_its_children() -> None:
    """Children of the zygote run without capabilities (root in CI keeps uid 0 but not CAP_SYS_PTRACE)."""

    def body() -> object:
        layers.not_dumpable()
        parent = os.getpid()

        def grandchild() -> object:
            dropped = layers.drop_capabilities()
            return [dropped, attempt(lambda: os.readlink(f"/proc/{parent}/fd/1")),
                    attempt(lambda: open(f"/proc/{parent}/environ").read())]

        return in_child(grandchild)

    assert in_child(body) == [True, "EPERM", "EPERM"]  # PermissionError (EACCES)


def test_the_audit_hook_ignores_edits_to_the_module_globals() -> None:
    """The hook binds its lists when installed: a candidate that rewrites them cannot switch it off."""

    def body() -> object:
        layers.prepare_zygote()
        layers.install_audit_hook()
        vars(layers).update(_READ_PREFIXES=("/",), _BLOCKED_EVENTS=frozenset(), _BLOCKED_PREFIXES=())
        os.path.abspath = lambda p: sys.prefix + "/x"  # the old check went through os.path
        return {"passwd": attempt(lambda: open("/etc/passwd").read()),
                "system": attempt(lambda: os.system("true")),
                "dotdot": attempt(lambda: open(sys.prefix + "/../../../../etc/passwd").read()),
                "relative": attempt(lambda: open("passwd").read())}

    assert in_child(body) == {"passwd": "EPERM", "system": "EPERM", "dotdot": "EPERM", "relative": "EPERM"}


def test_tampering_with_the_layers_is_detected() -> None:
    before = layers.snapshot()
    original = layers._READ_PREFIXES
    try:
        layers._READ_PREFIXES = ("/",)
        assert layers.tampering(before) == "tampering: the model changed cwm.sandbox.layers._READ_PREFIXES"
    finally:
        layers._READ_PREFIXES = original


def test_missing_libseccomp_is_warned_about_once(monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(layers, "pyseccomp", None)
    monkeypatch.setattr(layers, "_WARNED_NO_SECCOMP", [])
    with caplog.at_level("WARNING", logger="cwm.sandbox"):
        assert layers.build_seccomp_filter() is None
        assert layers.build_seccomp_filter() is None
        layers.warn_once_without_seccomp()
    assert [r.getMessage() for r in caplog.records if "libseccomp" in r.getMessage()] == [
        "libseccomp is unavailable (pyseccomp could not load it): sandboxed code runs without the seccomp "
        "deny-list; install Debian's 'libseccomp2'"]


def test_every_watched_module_is_loaded_in_the_zygote() -> None:
    # A watched name the zygote never imports is silently skipped by the snapshot: the module it meant to
    # guard (renamed or moved) would go unwatched. A fresh interpreter shows what the zygote itself loads.
    probe = ("import sys, cwm.sandbox.zygote\n"
             "from cwm.sandbox.tamper import WATCHED_MODULES\n"
             "print(','.join(name for name in WATCHED_MODULES if name not in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
