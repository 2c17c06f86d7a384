"""Synthesis: an LLM writes a program (a code world model, an inference, value or encoder function, a fast twin), checks
built from trajectories score it, and a refinement strategy (conversation or Thompson-sampled tree search)
improves it until every check passes. Every target's entry point takes ``(game, llm, settings, ...)`` with
one ``SynthesisSettings``."""

from cwm.sandbox.checkers import world_model_checker
from cwm.synthesis.encoder import EncoderResult, synthesize_encoder
from cwm.synthesis.extract import CodeExtractionError, Extraction, extract_code
from cwm.synthesis.fast import FastResult, synthesize_fast
from cwm.synthesis.inference import synthesize_inference
from cwm.synthesis.jax_synthesis import synthesize_jax
from cwm.synthesis.loop import run_search
from cwm.synthesis.settings import STRATEGIES, TARGETS, RequestSettings, SynthesisSettings, TreeSettings
from cwm.synthesis.store import ResumeError, RunStore
from cwm.synthesis.target import PromptSet, Target, world_model_target
from cwm.synthesis.types import CurvePoint, Node, SynthesisResult
from cwm.synthesis.value import ValueCandidates, synthesize_values
from cwm.synthesis.world_model import synthesize_world_model, test_set

__all__ = [
    "STRATEGIES",
    "TARGETS",
    "CodeExtractionError",
    "CurvePoint",
    "EncoderResult",
    "Extraction",
    "FastResult",
    "Node",
    "PromptSet",
    "RequestSettings",
    "ResumeError",
    "RunStore",
    "SynthesisResult",
    "SynthesisSettings",
    "Target",
    "TreeSettings",
    "ValueCandidates",
    "extract_code",
    "run_search",
    "synthesize_encoder",
    "synthesize_fast",
    "synthesize_jax",
    "synthesize_inference",
    "synthesize_values",
    "synthesize_world_model",
    "test_set",
    "world_model_checker",
    "world_model_target",
]
