"""Normal-form game reasoning evals: seeded tasks, exact solver answers, reply parsing, contestants, audit, export.

Each question family lives in a module of its own under ``families`` (a ``Family`` record: question text
fields, answer key, item generator, CWM-route data); the other modules dispatch through ``families.REGISTRY``.
The audit re-solves formal records and checks their stored game against their text (``crosscheck``), or
transcribes plain ones (``transcribe``); ``registry`` exports task
sets to the OpenAI evals registry and inspect_ai.

Names are imported lazily (on first use) so that the sandbox child, which loads ``cwm.nfg.job`` with
only the ``cwm`` package mounted, never imports the prompt files or the LLM layer.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "AnswerKey": "answers", "Exploitability": "answers", "Reply": "answers",
    "AuditFinding": "audit", "audit_file": "audit", "audit_record": "audit",
    "CwmContestant": "contestants", "DirectContestant": "contestants", "evaluate": "contestants",
    "Family": "families",
    "MatrixGame": "game", "NfgFormatError": "game",
    "generate": "generator", "generate_one": "generator",
    "parse_reply": "parse",
    "ItemResult": "score", "save_results": "score", "summarise": "score", "wilson": "score",
    "FAMILIES": "tasks", "Task": "tasks", "load": "tasks", "save": "tasks", "solve": "tasks",
    "crosscheck": None, "families": None, "render": None, "registry": None, "transcribe": None,
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'cwm.nfg' has no attribute {name!r}")
    module = importlib.import_module(f"cwm.nfg.{_WHERE[name] or name}")
    value = module if _WHERE[name] is None else getattr(module, name)
    globals()[name] = value
    return value
