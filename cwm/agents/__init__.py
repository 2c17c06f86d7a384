"""Agents: spec strings -> agents that pick a move at a real game state. Random and ground-truth planners, the
CWM agent (planning on a synthesized model in a hardened worker, or in this process when trusted), the agent
of a selection, the direct LLM policy, a PPO policy, a person at a terminal, and OpenSpiel's native bots."""

from cwm.agents.base import Agent, AgentError, IllegalMoveError, ISMCTSAgent, MCTSAgent, RandomAgent
from cwm.agents.cwm import CWMAgent, CWMPlanner, GameFacts, HistoryTracker, PlayerView, inference_sampler
from cwm.agents.human import HumanAgent
from cwm.agents.llm import LLMPolicyAgent, parse_action
from cwm.agents.specs import (
    AgentSpec,
    AgentSpecError,
    Settings,
    bundle_agent,
    bundle_move,
    check_agent,
    load_cwm,
    make_agent,
    parse_agent_spec,
    parse_agent_specs,
)

__all__ = ["Agent", "AgentError", "AgentSpec", "AgentSpecError", "CWMAgent", "CWMPlanner", "GameFacts",
           "HistoryTracker", "HumanAgent", "ISMCTSAgent", "IllegalMoveError", "LLMPolicyAgent", "MCTSAgent",
           "PlayerView", "RandomAgent", "Settings", "bundle_agent", "bundle_move", "check_agent", "inference_sampler", "load_cwm", "make_agent",
           "parse_action", "parse_agent_spec", "parse_agent_specs"]
