"""Planners and agents: UCT MCTS and information-set MCTS over pyspiel-shaped states, and the agents the
arena plays (random, GT-MCTS, GT-ISMCTS, CWM, direct LLM policy), built from picklable spec strings, and
a person at a terminal (``HumanAgent``, for ``cwm play``)."""

from planners.agents import Agent, AgentError, IllegalMoveError, ISMCTSAgent, MCTSAgent, RandomAgent
from planners.config import SearchConfig
from planners.cwm_agent import CWMAgent, CWMPlanner, GameFacts, HistoryTracker, PlayerView, inference_sampler
from planners.gt_resample import HistoryResampler, ResampleFailure
from planners.gt_sampler import GroundTruthSampler
from planners.human import HumanAgent
from planners.ismcts import ISMCTS, Sampler, resample_from_infostate
from planners.llm_policy import LLMPolicyAgent, parse_action
from planners.mcts import MCTS, SearchResult, ValueFn
from planners.rollout import rollout_returns
from planners.specs import (
    AgentSpec,
    AgentSpecError,
    Settings,
    check_agent,
    load_cwm,
    make_agent,
    parse_agent_spec,
    parse_agent_specs,
)

__all__ = [
    "MCTS",
    "ISMCTS",
    "Agent",
    "AgentError",
    "AgentSpec",
    "AgentSpecError",
    "CWMAgent",
    "CWMPlanner",
    "GameFacts",
    "GroundTruthSampler",
    "HistoryResampler",
    "HistoryTracker",
    "HumanAgent",
    "ISMCTSAgent",
    "IllegalMoveError",
    "LLMPolicyAgent",
    "MCTSAgent",
    "PlayerView",
    "RandomAgent",
    "ResampleFailure",
    "Sampler",
    "SearchConfig",
    "SearchResult",
    "Settings",
    "ValueFn",
    "check_agent",
    "inference_sampler",
    "load_cwm",
    "make_agent",
    "parse_action",
    "parse_agent_spec",
    "parse_agent_specs",
    "resample_from_infostate",
    "rollout_returns",
]
