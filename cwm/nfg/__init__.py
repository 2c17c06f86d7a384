"""Normal-form game reasoning evals: seeded tasks, exact solver answers, reply parsing, two contestants, audit."""

from cwm.nfg.answers import AnswerKey, Reply
from cwm.nfg.audit import AuditFinding, audit_file, audit_record
from cwm.nfg.contestants import CwmContestant, DirectContestant, evaluate
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.nfg.generate import generate, generate_one
from cwm.nfg.parse import parse_reply
from cwm.nfg.score import ItemResult, save_results, summarise, wilson
from cwm.nfg.tasks import FAMILIES, Task, load, save, solve

__all__ = [
    "FAMILIES",
    "AnswerKey",
    "AuditFinding",
    "CwmContestant",
    "DirectContestant",
    "ItemResult",
    "MatrixGame",
    "NfgFormatError",
    "Reply",
    "Task",
    "audit_file",
    "audit_record",
    "evaluate",
    "generate",
    "generate_one",
    "load",
    "parse_reply",
    "save",
    "save_results",
    "solve",
    "summarise",
    "wilson",
]
