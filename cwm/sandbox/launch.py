"""Starting the sandbox's zygote: its scrubbed environment, the bubblewrap command line, and its pipes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

from cwm.types import CwmError

_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)
_STARTUP_S = 120.0


class SandboxError(CwmError, RuntimeError):
    """The sandbox itself could not run (the zygote would not start); never raised for bad candidate code."""


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The zygote's environment: a short allow-list, minus anything that looks like a credential."""
    env = {k: v for k, v in os.environ.items() if k in _ENV_KEEP or k.startswith("LC_")}
    env.update({"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1",
                "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HOME": "/tmp", "PYTHONPATH": _repo_root()})
    env.update(extra or {})
    return {k: v for k, v in env.items() if not _SECRET.search(k)}


def _repo_root() -> str:
    """The directory that holds the ``cwm`` package (a checkout or site-packages)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


_BWRAP_OK: bool | None = None


def bwrap_available() -> bool:
    """Whether ``bwrap`` is on PATH and can create namespaces here (probed once per process)."""
    global _BWRAP_OK
    if _BWRAP_OK is None:
        exe = shutil.which("bwrap")
        probe = [exe or "bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"]
        try:
            _BWRAP_OK = bool(exe) and subprocess.run(probe, capture_output=True, timeout=20).returncode == 0
        except (OSError, subprocess.SubprocessError):
            _BWRAP_OK = False
    return _BWRAP_OK


def bwrap_command(env: dict[str, str]) -> list[str]:
    """bubblewrap arguments that show the zygote only the interpreter, its libraries and cwm, read-only."""
    # The scratch /tmp comes first: a later mount would hide binds below it (a venv under /tmp, as in CI).
    args = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for k, v in env.items():
        args += ["--setenv", k, v]
    for top in ("/lib", "/lib64", "/bin", "/sbin"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    binds = ["/usr", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", sys.base_prefix, sys.prefix,
             sys.exec_prefix, *[p for p in sys.path if "-packages" in p], *[os.path.join(_repo_root(), pkg) for pkg in ("cwm", "planners", "prompts", "game_rules")]]
    seen: set[str] = set()
    for path in binds:
        path = os.path.abspath(path)
        if os.path.exists(path) and path not in seen:
            seen.add(path)
            args += ["--ro-bind", path, path]
    return args + ["--chdir", "/tmp"]


class Zygote:
    """One running zygote process and its two pipes."""

    def __init__(self, use_bwrap: bool):
        env = scrubbed_env()
        cmd = [sys.executable, "-m", "cwm.sandbox.zygote"]
        if use_bwrap:
            cmd = bwrap_command(env) + cmd
        self.mode = "bwrap" if use_bwrap else "process"
        self.owner = os.getpid()  # a forked copy of the Sandbox must not use (or kill) this zygote
        # An empty starting directory (`-m` puts the cwd on sys.path), needed only until the zygote runs: it is
        # removed then, so a process that exits without closing its sandbox leaves no folder behind.
        workdir = tempfile.mkdtemp(prefix="cwm-sandbox-")
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                         cwd=workdir, start_new_session=True)
            self.sent: set[str] = set()
            self.started = time.monotonic()
            try:
                ready = self.receive(time.monotonic() + _STARTUP_S)
            except BaseException:  # an interrupt while it starts: it must not outlive this (and print a traceback)
                self.kill()
                raise
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        if not ready or not ready.get("ready"):
            self.kill()
            raise SandboxError(f"the sandbox zygote ({self.mode}) did not start; exit status {self.proc.poll()}")

    def send(self, body: bytes) -> bool:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(len(body).to_bytes(8, "big") + body)
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def receive(self, deadline: float) -> dict[str, Any] | None:
        """One JSON frame from the zygote, or ``None`` if it died or the deadline passed."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        head = self._read(fd, 8, deadline)
        body = self._read(fd, int.from_bytes(head, "big"), deadline) if head else None
        return json.loads(body) if body is not None else None

    @staticmethod
    def _read(fd: int, n: int, deadline: float) -> bytes | None:
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
