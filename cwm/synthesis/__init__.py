"""Synthesis: an LLM writes a program (a code world model), checks built from trajectories score it, and a
refinement strategy (conversation or Thompson-sampled tree search) improves it until every check passes."""

from cwm.sandbox.checkers import world_model_checker
from cwm.synthesis.extract import CodeExtractionError, Extraction, extract_code
from cwm.synthesis.loop import STRATEGIES, RequestSettings, TreeSettings, run_search
from cwm.synthesis.store import ResumeError, RunStore
from cwm.synthesis.target import PromptSet, Target, world_model_target
from cwm.synthesis.types import CurvePoint, Node, SynthesisResult
from cwm.synthesis.world_model import synthesize_world_model, test_set

__all__ = [
    "STRATEGIES",
    "CodeExtractionError",
    "CurvePoint",
    "Extraction",
    "Node",
    "PromptSet",
    "RequestSettings",
    "ResumeError",
    "RunStore",
    "SynthesisResult",
    "Target",
    "TreeSettings",
    "extract_code",
    "run_search",
    "synthesize_world_model",
    "test_set",
    "world_model_checker",
    "world_model_target",
]
