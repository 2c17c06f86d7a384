"""One Decrypto episode: the turn loop over three agents, with the optional theory-of-mind probes.

Each turn: the engine draws a code; Alice gives hints (then, when probing, predicts Eve's guess); Bob
guesses; Eve answers the keyword questions (when probing, from the second turn on) and guesses; the engine
checks and records the turn and decides whether the game ends. Agents see only their own role's view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cwm.decrypto.engine import Game
from cwm.decrypto.types import Attempt, Encoder, Episode, Guesser, Turn, View

KEYWORD_TASKS = ("keywords_now", "keywords_before", "keywords_other")


def agent_seeds(seed: int) -> tuple[int, int, int]:
    """Three independent seeds (Alice, Bob, Eve) derived from one agent seed."""
    children = np.random.SeedSequence(seed).spawn(3)
    return tuple(int(c.generate_state(1)[0]) for c in children)  # type: ignore[return-value]


def play_episode(alice: Encoder, bob: Guesser, eve: Guesser, *, game_seed: int, agent_seed: int = 0,
                 episode_id: str = "", probes: bool = False, keywords: tuple[str, ...] | None = None,
                 on_turn: Callable[[Turn], None] | None = None) -> Episode:
    """Plays one game to its end.

    Args:
      alice, bob, eve: the three agents (each reset with its own seed when it has ``reset``).
      game_seed: seeds the keyword draw and every code.
      agent_seed: seeds the agents (split three ways by :func:`agent_seeds`).
      episode_id: the episode's label in results.
      probes: ask the theory-of-mind questions of agents that answer them (LLM agents).
      keywords: play with these four keywords instead of drawn ones (the codes still follow ``game_seed``).
      on_turn: called with each turn as it is recorded (progress, human play).

    Raises:
      DecryptoError: an agent's move breaks the rules (agents that can fail fall back to a default
        move themselves, so this means a bug in the agent).
    """
    game = Game.new(game_seed)
    if keywords is not None:
        game.keywords = tuple(keywords)
    agents: dict[str, Any] = {"alice": alice, "bob": bob, "eve": eve}
    for agent, seed in zip(agents.values(), agent_seeds(agent_seed)):
        if hasattr(agent, "reset"):
            agent.reset(seed)
    attempts: list[Attempt] = []
    found: list[dict[str, Any]] = []
    while game.end is None:
        turn = _play_turn(game, agents, probes, found)
        for agent in agents.values():
            attempts += agent.take_attempts() if hasattr(agent, "take_attempts") else []
        if on_turn is not None:
            on_turn(turn)
    return Episode(episode_id, game_seed, agent_seed, {r: a.name for r, a in agents.items()}, game.keywords,
                   tuple(game.turns), str(game.end), tuple(attempts), tuple(found))


def _play_turn(game: Game, agents: dict[str, Any], probes: bool, found: list[dict[str, Any]]) -> Turn:
    number, history, code = len(game.turns) + 1, tuple(game.turns), game.next_code()
    hints = tuple(agents["alice"].hints(View("alice", number, history, game.keywords, code)))
    probe_alice = probes and hasattr(agents["alice"], "predict_eve")
    alice_view = View("alice", number, history, game.keywords, code)
    predicted = agents["alice"].predict_eve(alice_view, hints) if probe_alice else None
    bob_guess = agents["bob"].guess(View("bob", number, history, game.keywords, hints=hints))
    eve_view = View("eve", number, history, hints=hints)
    beliefs = {}
    if probes and history and hasattr(agents["eve"], "keyword_belief"):
        beliefs = {t: agents["eve"].keyword_belief(eve_view, t, game.keywords) for t in KEYWORD_TASKS}
    eve_guess = agents["eve"].guess(eve_view)
    turn = game.record(code, hints, bob_guess, eve_guess)
    if probe_alice:
        found.append({"kind": "perspective", "turn": number, "predicted": _listed(predicted),
                      "eve_guess": list(eve_guess), "code": list(code)})
    if beliefs:
        found.append({"kind": "keywords", "turn": number, "keywords": list(game.keywords),
                      **{t: _listed(v) for t, v in beliefs.items()}})
    return turn


def _listed(value: Any) -> list[Any] | None:
    return None if value is None else list(value)
