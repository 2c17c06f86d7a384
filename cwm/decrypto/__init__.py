"""Decrypto: the three-player language benchmark of cooperation, competition and theory of mind.

Alice and Bob share four keywords; each turn Alice hints a 3-digit code, Bob and the interceptor Eve guess
it. The package holds the engine (:mod:`~cwm.decrypto.engine`), LLM agents (:mod:`~cwm.decrypto.llm_agents`),
embedding baselines (:mod:`~cwm.decrypto.baselines`), hot-seat human play (:mod:`~cwm.decrypto.human`), the
evaluation runner, metrics and theory-of-mind scores, reports and an HTML transcript viewer. See
docs/decrypto.md.
"""

from cwm.decrypto.baselines import EmbedAlice, EmbedBob, EmbedEve, assign
from cwm.decrypto.embeddings import Embedding, load_embedding, load_glove, load_text_vectors
from cwm.decrypto.engine import (
    ALL_CODES,
    Game,
    end_condition,
    hint_problem,
    keyword_combinations,
    keyword_list,
)
from cwm.decrypto.human import HumanAgent, Terminal
from cwm.decrypto.llm_agents import DEFAULT_GUESS, LLMAgent, default_hints
from cwm.decrypto.metrics import keyword_scores, perspective_scores, summarize, tom_report
from cwm.decrypto.play import EpisodeSettings, play_episode
from cwm.decrypto.report import render_html, write_html
from cwm.decrypto.runner import Pairing, cross_play, read_episodes, run_pairing
from cwm.decrypto.specs import AgentSpec, build_agent, configuration, parse_spec
from cwm.decrypto.types import (
    Attempt,
    Code,
    DecryptoError,
    Encoder,
    Episode,
    Guesser,
    Turn,
    View,
)

__all__ = [
    "ALL_CODES",
    "DEFAULT_GUESS",
    "AgentSpec",
    "Attempt",
    "Code",
    "DecryptoError",
    "EmbedAlice",
    "EmbedBob",
    "EmbedEve",
    "Embedding",
    "Encoder",
    "Episode",
    "EpisodeSettings",
    "Game",
    "Guesser",
    "HumanAgent",
    "LLMAgent",
    "Pairing",
    "Terminal",
    "Turn",
    "View",
    "assign",
    "build_agent",
    "configuration",
    "cross_play",
    "default_hints",
    "end_condition",
    "hint_problem",
    "keyword_combinations",
    "keyword_list",
    "keyword_scores",
    "load_embedding",
    "load_glove",
    "load_text_vectors",
    "parse_spec",
    "perspective_scores",
    "play_episode",
    "read_episodes",
    "render_html",
    "run_pairing",
    "summarize",
    "tom_report",
    "write_html",
]
