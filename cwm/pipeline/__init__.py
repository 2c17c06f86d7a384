"""The main job, ``cwm run``: collect -> synthesize -> export -> arena -> report, resumable stage by stage."""

from cwm.pipeline.report import perfect_bound_note, posterior_lines
from cwm.pipeline.stages import (  # noqa: F401
    API_KEY_VARS,
    CWM_LABEL,
    EXTENDABLE,
    INFERENCE_TEST_GAMES,
    PipelineError,
    RunConfig,
    arena_search,
    default_opponents,
    recording_for,
    recording_provenance,
    resolve_llm,
    run,
)

__all__ = ['API_KEY_VARS', 'CWM_LABEL', 'EXTENDABLE', 'INFERENCE_TEST_GAMES', 'PipelineError', 'RunConfig', 'arena_search', 'default_opponents', 'perfect_bound_note', 'posterior_lines', 'recording_for', 'recording_provenance', 'resolve_llm', 'run']
