"""Planners: tree searches over anything shaped like ``pyspiel.State`` (ground truth or a code world model):
one search loop (``TreeSearch``) with the child selection (``select_uct``, ``select_puct``) and the leaf
evaluator passed in, as ``MCTS`` (UCT, rollouts or value leaves, MCTS-Solver) and ``PUCT`` (a prior with a
value); information-set MCTS (``ISMCTS``) on the same evaluators; their settings, rollouts and ground-truth
resamplers. Imports only cwm's kernel."""

import importlib
from typing import Any

from cwm import install_moved
from planners.config import SearchConfig
from planners.evaluators import (
    Evaluator,
    PriorValueEvaluator,
    PriorValueFn,
    RolloutEvaluator,
    ValueEvaluator,
    ValueFn,
    leaf_evaluator,
)
from planners.gt_resample import HistoryResampler, ResampleFailure
from planners.gt_sampler import GroundTruthSampler
from planners.ismcts import ISMCTS, InfoNode, InfoTree, Sampler, resample_from_infostate
from planners.mcts import MCTS
from planners.puct import PUCT
from planners.rollout import rollout_returns
from planners.search import Select, TreeSearch, select_puct, select_uct
from planners.settings import ISMCTSSettings, MCTSSettings, PUCTSettings
from planners.tree import Node, SearchResult, Tree

__all__ = ["MCTS", "ISMCTS", "PUCT", "TreeSearch", "Evaluator", "GroundTruthSampler", "HistoryResampler",
           "ISMCTSSettings", "InfoNode", "InfoTree", "MCTSSettings", "Node", "PUCTSettings", "PriorValueEvaluator",
           "PriorValueFn", "ResampleFailure", "RolloutEvaluator", "Sampler", "SearchConfig", "SearchResult",
           "Select", "Tree", "ValueEvaluator", "ValueFn", "leaf_evaluator", "resample_from_infostate",
           "rollout_returns", "select_puct", "select_uct"]

# The agents moved to ``cwm.agents`` and the per-call budget to ``cwm.sandbox``: their former module names
# and the agent names this package exported stay importable for one release, with a DeprecationWarning.
MOVED = {
    "planners.agents": "cwm.agents.base",
    "planners.budget": "cwm.sandbox.budget",
    "planners.cwm_agent": "cwm.agents.cwm",
    "planners.human": "cwm.agents.human",
    "planners.llm_policy": "cwm.agents.llm",
    "planners.native": "cwm.agents.native",
    "planners.ppo": "cwm.agents.ppo",
    "planners.selected": "cwm.agents.selected",
    "planners.spec_grammar": "cwm.agents.grammar",
    "planners.specs": "cwm.agents.specs",
    "planners.worker_agent": "cwm.agents.worker",
}
install_moved(MOVED)
_AGENT_NAMES = frozenset({"Agent", "AgentError", "AgentSpec", "AgentSpecError", "CWMAgent", "CWMPlanner", "GameFacts",
                          "HistoryTracker", "HumanAgent", "ISMCTSAgent", "IllegalMoveError", "LLMPolicyAgent",
                          "MCTSAgent", "PlayerView", "RandomAgent", "Settings", "check_agent", "inference_sampler",
                          "load_cwm", "make_agent", "parse_action", "parse_agent_spec", "parse_agent_specs"})


def __getattr__(name: str) -> Any:
    """A former name of this package: an agent (now in ``cwm.agents``) or a moved module (deprecated)."""
    if name in _AGENT_NAMES:
        import warnings

        warnings.warn(f"planners.{name} moved to cwm.agents.{name}; the old name is deprecated and will be removed",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("cwm.agents"), name)
    if f"planners.{name}" in MOVED:
        return importlib.import_module(f"planners.{name}")
    raise AttributeError(f"module 'planners' has no attribute {name!r}")
