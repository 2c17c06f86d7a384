"""The PPO policy's agents: ``PPOAgent`` plays the policy's best legal action, ``PUCTAgent`` searches a world model
with ``planners.PUCT`` guided by the policy (its head as the prior, its critic at the leaves), in numpy.

The network and the ``policy.npz`` files are data, in ``cwm.bundle.policy`` (``PolicyConfig``, ``forward``,
``init_params``, ``load_policy``, ...); their former names here still import, with a ``DeprecationWarning``.
``PPOAgent`` runs the encoder it is given (in a sandbox worker for the ``ppo:DIR`` agent spec,
``cwm.agents.specs``).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel

from cwm import games
from cwm.agents.base import AgentBase, AgentError, IllegalMoveError
from cwm.bundle import load_bundle
from cwm.bundle import policy as network
from cwm.bundle.files import FILE_LIMITS, MANIFEST, BundleError
from cwm.files import read_bounded
from cwm.types import CwmError
from planners import PUCT, PriorValueEvaluator, PUCTSettings

Observe = Callable[[Any, int], Any]  # a player's observation of a search state
Encode = Callable[[Any, int], Any]  # the policy's observation encoder


class PPOAgent(AgentBase):
    """Plays a trained policy in the real game: observation -> encoder -> network -> the best legal action.

    Args:
      params, config: the policy (``cwm.bundle.policy.load_policy``).
      encode: the observation encoder it was trained with (in a sandbox worker for untrusted code).
      game: the real game.
      greedy: play the most likely legal action (default) rather than sample.
      seed: the sampling seed (only used when not greedy).
    """

    def __init__(self, params: dict[str, np.ndarray], config: network.PolicyConfig, encode: Callable[[Any, int], Any],
                 game: str | games.GameSpec, *, greedy: bool = True, seed: int | np.random.Generator | None = None):
        self.params, self.config, self.encode = params, config, encode
        self.spec = games.resolve(game)
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)
        self.hidden = np.zeros((1, config.hidden), np.float32)

    def reset(self) -> None:
        """A new match: the GRU forgets the last one."""
        self.hidden = np.zeros_like(self.hidden)

    def close(self) -> None:
        """Ends the encoder's worker, if it has one."""
        close = getattr(self.encode, "close", None)
        if callable(close):
            close()

    def step(self, state: pyspiel.State) -> int:
        player = state.current_player()
        try:
            vector = self.encode(games.observe(self.spec, state, player), player)
        except AgentError:
            raise
        except CwmError as e:  # the contained encoder refused or failed: a forfeit with the reason
            raise AgentError(f"the PPO policy's encoder failed: {e}") from None
        if not isinstance(vector, list) or len(vector) != self.config.obs_size:
            raise AgentError(f"the PPO policy's encoder returned {type(vector).__name__} of length "
                             f"{len(vector) if isinstance(vector, list) else '?'}, not {self.config.obs_size} floats")
        obs = np.asarray([vector], np.float32)
        logits, _, self.hidden = network.forward(self.params, obs, self.hidden)
        legal = [a for a in state.legal_actions() if 0 <= a < self.config.num_actions]
        if not legal:
            raise IllegalMoveError(f"the PPO policy has {self.config.num_actions} actions, none of them legal here "
                                   f"({state.legal_actions()[:10]}): trained for another game?")
        scores = logits[0, legal]
        if self.greedy:
            return int(legal[int(np.argmax(scores))])
        p = np.exp(scores - scores.max())
        return int(legal[self.rng.choice(len(legal), p=p / p.sum())])


def ppo_prior_value(params: dict[str, np.ndarray], config: network.PolicyConfig, encode: Encode,
                    observe: Observe) -> Callable[[Any], tuple[dict[int, float], float]]:
    """The policy at a decision state: its masked softmax over the legal actions (ids the policy knows) as the
    prior, and the critic's value for the player to move; one forward pass."""

    def prior_value(state: Any) -> tuple[dict[int, float], float]:
        player = state.current_player()
        obs = np.asarray([encode(observe(state, player), player)], np.float32)
        logits, value, _ = network.forward(params, obs, np.zeros((1, config.hidden), np.float32))
        legal = [a for a in state.legal_actions() if 0 <= a < config.num_actions]
        mask = np.zeros(config.num_actions, bool)
        mask[legal] = True
        scores = network.masked_logits(logits[0], mask)
        p = np.exp(scores - scores.max())
        p /= p.sum()
        return {a: float(p[a]) for a in legal}, float(value[0])

    return prior_value


def ppo_evaluator(params: dict[str, np.ndarray], config: network.PolicyConfig, encode: Encode,
                  observe: Observe) -> PriorValueEvaluator:
    """The PPO policy as PUCT's evaluator (AlphaZero-style): the policy head as the prior, the critic as the leaf
    value (two players, zero-sum: the other player's value is its negation).

    Raises:
      ValueError: a recurrent policy (its value depends on the whole observation sequence, not the state).
    """
    if config.recurrent:
        raise ValueError("PUCT needs a feed-forward policy: a recurrent one values sequences, not states")
    return PriorValueEvaluator(ppo_prior_value(params, config, encode, observe))


def ppo_puct(params: dict[str, np.ndarray], config: network.PolicyConfig, encode: Encode, observe: Observe, *,
             num_simulations: int = 100, c_puct: float = 1.25, seed: int | np.random.Generator | None = None) -> PUCT:
    """``planners.PUCT`` guided by a PPO policy (what ``planners.puct.PUCT`` took these arguments for before).

    Args:
      params, config: the policy (``cwm.bundle.policy.load_policy``); a feed-forward one (no GRU).
      encode: its observation encoder.
      observe: a player's observation of a search state (``lambda s, p: s.observation(p)`` on a model).
      num_simulations: simulations per move.
      c_puct: the exploration constant (AlphaZero's chess and shogi value, 1.25, by default).
      seed: chance outcomes drawn in the tree.

    Raises:
      ValueError: a recurrent policy.
      UsageError: a setting out of range.
    """
    return PUCT(ppo_evaluator(params, config, encode, observe),
                PUCTSettings(num_simulations=num_simulations, c_puct=c_puct), seed=seed)


class PUCTAgent(AgentBase):
    """Plays the real game with a search on a world model (``ppo_puct``): the real moves replayed into the model by
    their strings (perfect information), the chosen action id played in the real game.

    Args:
      model: the world model (``cwm.model.WorldModel``) whose codec gives the real game's ids.
      puct: the search (its evaluator reads model states), anything with ``step(state) -> action id``.
    """

    def __init__(self, model: Any, puct: Any):
        self.model, self.puct = model, puct

    def step(self, state: Any) -> int:
        real = state.get_game().new_initial_state()
        mirror = self.model.new_initial_state()
        for action in state.history():
            mirror = mirror.child_from_string(real.action_to_string(real.current_player(), action))
            real.apply_action(action)
        return int(self.puct.step(mirror))


# The network and its files moved to cwm.bundle.policy (data, below the agents); their former names here.
MOVED_TO_POLICY = {"ENCODER_FILE": "ENCODER_FILE", "POLICY_FILE": "POLICY_FILE", "Params": "Params",
                   "PolicyConfig": "PolicyConfig", "PolicyError": "PolicyError", "forward": "forward", "gru": "gru",
                   "init_params": "init_params", "load_policy": "load_policy", "masked_logits": "masked_logits",
                   "policy_bytes": "policy_bytes", "read_policy": "read_policy", "save_policy": "save_policy_dir"}


def __getattr__(name: str) -> Any:
    """A name that moved to ``cwm.bundle.policy`` (deprecated here)."""
    if name in MOVED_TO_POLICY:
        new = MOVED_TO_POLICY[name]
        warnings.warn(f"cwm.agents.ppo.{name} moved to cwm.bundle.policy.{new}; the old name is deprecated and "
                      f"will be removed", DeprecationWarning, stacklevel=2)
        return getattr(network, new)
    raise AttributeError(f"module 'cwm.agents.ppo' has no attribute {name!r}")
def policy_at(target: str, game: games.GameSpec) -> tuple[dict[str, np.ndarray], network.PolicyConfig, str]:
    """The weights, config and encoder source the ``ppo:TARGET`` agent plays: a bundle directory (verified
    by ``cwm.bundle.load_bundle`` with ``game``, once per process: an arena builds the agent per match) or a
    policy directory (``load_policy``).

    Raises:
      BundleError: a bundle that fails its verification or holds no policy.
      PolicyError: a policy directory whose ``policy.npz`` does not read.
      OSError, UnicodeDecodeError: a policy directory's ``encoder.py`` cannot be read.
      InputLimitError: a policy directory's ``encoder.py`` is larger than a bundle's code file may be.
    """
    if (Path(target) / MANIFEST).is_file():
        found = _bundle_policy(str(Path(target).resolve()), game.name)
        return found.params, found.config, found.encoder_source
    params, config, _ = network.load_policy(target)
    encoder = read_bounded(Path(target) / network.ENCODER_FILE, FILE_LIMITS[network.ENCODER_FILE], what="encoder")
    return params, config, encoder.decode("utf-8")


@functools.lru_cache(maxsize=16)
def _bundle_policy(target: str, game: str) -> network.BundlePolicy:
    found = load_bundle(target, game=game).policy
    if found is None:
        raise BundleError(f"{target}: the bundle holds no PPO policy ({network.POLICY_FILE}); train one with "
                          f"`cwm train ppo {target}`")
    return found


