"""Running untrusted (LLM-written) code: the static gate, hardened worker processes, limits and verdicts.

Modules: ``gate`` (the static gate and its rule table), ``names`` (the names the gate and the runtime layers
allow or refuse), ``layers`` (each hardening layer on its own), ``imports`` (the guarded ``__import__`` and
its module views), ``tamper`` (the check after a job), ``launch`` (the zygote's environment and bubblewrap
command line), ``zygote`` (the pre-loaded process that forks one child per job, or per batch of jobs), ``watch`` (when a child
has run too long: the CPU time it used decides, wall time is a backstop), ``child`` (the hardened child),
``jobs`` (the trusted functions a child runs), ``box`` (``Sandbox``, the host side) and ``equivalence`` (the
differential equivalence check of a twin against its model, each in its own child).
docs/security.md says what runs where and what is promised.
"""

from cwm.sandbox.box import (
    CALL_JOB,
    CHECK_JOB,
    RANDOM_PLAY_JOB,
    BatchJob,
    JobResult,
    Limits,
    Sandbox,
    SandboxError,
    bwrap_available,
    scrubbed_env,
)
from cwm.sandbox.gate import ALLOWED_IMPORTS, FORBIDDEN_NAMES, static_gate
from cwm.sandbox.load import load_source, trust_notice

__all__ = ["ALLOWED_IMPORTS", "FORBIDDEN_NAMES", "CALL_JOB", "CHECK_JOB", "RANDOM_PLAY_JOB", "BatchJob", "JobResult",
           "Limits", "Sandbox", "SandboxError", "bwrap_available", "load_source", "scrubbed_env", "static_gate",
           "trust_notice"]
