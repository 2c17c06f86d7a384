"""One Decrypto episode: the turn loop over three agents, with the optional theory-of-mind probes.

Each turn: the engine draws a code; Alice gives hints (then, when probing, predicts Eve's guess); Bob
guesses; Eve answers the keyword questions (when probing, from the second turn on) and guesses; the engine
checks and records the turn and decides whether the game ends. Agents see only their own role's view.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from cwm.decrypto.engine import Game
from cwm.decrypto.types import DIGITS, Attempt, DecryptoError, Encoder, Episode, Guesser, Turn, View

KEYWORD_TASKS = ("keywords_now", "keywords_before", "keywords_other")


@dataclasses.dataclass(frozen=True, kw_only=True)
class EpisodeSettings:
    """How one episode is played, beyond its game seed.

    Attributes:
      agent_seed: seeds the agents (split three ways by :func:`agent_seeds`); default 0.
      episode_id: the episode's label in results (default "").
      probes: ask the theory-of-mind questions of agents that answer them (LLM agents); default False.
      keywords: play with these four distinct keywords instead of drawn ones (the codes still follow the
        game seed); default None: drawn.

    Raises:
      DecryptoError: a negative or non-integer agent seed, or keywords that are not four distinct words.
    """

    agent_seed: int = 0
    episode_id: str = ""
    probes: bool = False
    keywords: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.agent_seed, bool) or not isinstance(self.agent_seed, int) or self.agent_seed < 0:
            raise DecryptoError(f"agent_seed must be an int >= 0, got {self.agent_seed!r}")
        if self.keywords is None:
            return
        keywords = tuple(self.keywords)
        if len(set(keywords)) != len(DIGITS) or not all(isinstance(k, str) and k for k in keywords):
            raise DecryptoError(f"keywords must be {len(DIGITS)} distinct words, got {keywords!r}")
        object.__setattr__(self, "keywords", keywords)


def agent_seeds(seed: int) -> tuple[int, int, int]:
    """Three independent seeds (Alice, Bob, Eve) derived from one agent seed."""
    children = np.random.SeedSequence(seed).spawn(3)
    return tuple(int(c.generate_state(1)[0]) for c in children)  # type: ignore[return-value]


def play_episode(alice: Encoder, bob: Guesser, eve: Guesser, *, game_seed: int,
                 settings: EpisodeSettings | None = None, on_turn: Callable[[Turn], None] | None = None,
                 **deprecated: Any) -> Episode:
    """Plays one game to its end.

    Args:
      alice, bob, eve: the three agents (each reset with its own seed when it has ``reset``).
      game_seed: seeds the keyword draw and every code.
      settings: the agent seed, the episode's label, the probes and fixed keywords (default
        :class:`EpisodeSettings`'s defaults).
      on_turn: called with each turn as it is recorded (progress, human play).
      **deprecated: the settings by name (``agent_seed=``, ``episode_id=``, ``probes=``, ``keywords=``), as
        this function took them before :class:`EpisodeSettings`; they still work, over ``settings``, with a
        ``DeprecationWarning``.

    Raises:
      DecryptoError: an agent's move breaks the rules (agents that can fail fall back to a default
        move themselves, so this means a bug in the agent).
      TypeError: a keyword argument that is no setting.
    """
    settings = _with_deprecated(settings or EpisodeSettings(), deprecated)
    game = Game.new(game_seed)
    if settings.keywords is not None:
        game.keywords = settings.keywords
    agents: dict[str, Any] = {"alice": alice, "bob": bob, "eve": eve}
    for agent, seed in zip(agents.values(), agent_seeds(settings.agent_seed)):
        if hasattr(agent, "reset"):
            agent.reset(seed)
    attempts: list[Attempt] = []
    found: list[dict[str, Any]] = []
    while game.end is None:
        turn = _play_turn(game, agents, settings.probes, found)
        for agent in agents.values():
            attempts += agent.take_attempts() if hasattr(agent, "take_attempts") else []
        if on_turn is not None:
            on_turn(turn)
    return Episode(settings.episode_id, game_seed, settings.agent_seed, {r: a.name for r, a in agents.items()},
                   game.keywords, tuple(game.turns), str(game.end), tuple(attempts), tuple(found))


def _with_deprecated(settings: EpisodeSettings, options: dict[str, Any]) -> EpisodeSettings:
    """``settings`` with the settings ``play_episode`` was given by name (warned as deprecated)."""
    if not options:
        return settings
    names = {f.name for f in dataclasses.fields(EpisodeSettings)}
    unknown = sorted(set(options) - names)
    if unknown:
        raise TypeError(f"play_episode() got unexpected keyword argument(s) {unknown}; the settings are "
                        f"{sorted(names)}")
    given = ", ".join(f"{k}=..." for k in options)
    warnings.warn(f"play_episode({given}) is deprecated: pass settings=EpisodeSettings({given})",
                  DeprecationWarning, stacklevel=3)
    return dataclasses.replace(settings, **options)


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
