"""The job servers a sandbox child runs on untrusted code: the checks (``check``), hosting a game (``host``),
planning (``plan``), PPO's environments and encoder (``train``) and an inference function's draws
(``sample``), and one model's playout records for the differential equivalence check (``twin``). The zygote imports them all before it forks, so every child starts with them; the host side
names a job by its ``"module:function"`` string (``cwm.sandbox.box``'s ``*_JOB`` constants).
"""

from cwm.sandbox.jobs import check, host, plan, sample, train, twin
from cwm.sandbox.jobs.check import CONTRACTS, require

__all__ = ["CONTRACTS", "check", "host", "plan", "require", "sample", "train", "twin"]
