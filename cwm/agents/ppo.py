"""A PPO policy: the actor-critic network, its weights as plain ``.npz`` arrays, and its arena agent, in numpy.

The network (the paper's): the encoded observation goes through a 256-unit tanh layer, then (for hidden
information) a GRU over the player's sequence of observations, then a second 256-unit tanh layer shared
by a policy head (one logit per action id of the game, illegal ones masked out) and a value head.
``forward`` is written over an array module, so training runs the very same function in JAX
(``cwm.ppo.train``) while acting here needs numpy only.

A policy directory holds ``policy.npz`` (the weights and, under ``config``, the ``PolicyConfig`` as JSON)
and ``encoder.py`` (the observation encoder it was trained with). Both are untrusted input when loaded:
``load_policy`` checks every array's name, shape and finiteness; ``PPOAgent`` runs the encoder it is given
(in a sandbox worker for the ``ppo:DIR`` agent spec, ``cwm.agents.specs``).
"""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel

from cwm import games
from cwm.agents.base import AgentError, IllegalMoveError
from cwm.types import CwmError

POLICY_FILE, ENCODER_FILE = "policy.npz", "encoder.py"
Params = dict[str, Any]  # layer name -> array (numpy here, JAX in training)
_CONFIG_TYPES = {"obs_size": int, "num_actions": int, "hidden": int, "recurrent": bool, "game": str}


class PolicyError(CwmError, ValueError):
    """A policy file that is missing, malformed, or does not fit its config."""


@dataclasses.dataclass(frozen=True)
class PolicyConfig:
    """The shape of a policy network.

    Attributes:
      obs_size: the encoder's vector length.
      num_actions: the game's number of distinct action ids (the policy head's width).
      hidden: units of each tanh layer (and of the GRU); the paper's 256.
      recurrent: a GRU over the observation sequence (for hidden information).
      game: the game it was trained for.
    """

    obs_size: int
    num_actions: int
    hidden: int = 256
    recurrent: bool = False
    game: str = ""

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every parameter's shape, by name."""
        d, h, a = self.obs_size, self.hidden, self.num_actions
        shapes = {"w1": (d, h), "b1": (h,), "w2": (h, h), "b2": (h,), "w_pi": (h, a), "b_pi": (a,),
                  "w_v": (h, 1), "b_v": (1,)}
        if self.recurrent:  # the GRU's reset, update and candidate gates side by side
            shapes |= {"gru_x": (h, 3 * h), "gru_h": (h, 3 * h), "gru_bx": (3 * h,), "gru_bh": (3 * h,)}
        return shapes


def init_params(config: PolicyConfig, seed: int) -> dict[str, np.ndarray]:
    """Orthogonal weights (gain sqrt 2 for the trunk, 0.01 for the policy head, 1 for the value head) and
    zero biases, the usual PPO start; draws from ``np.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    gains = {"w_pi": 0.01, "w_v": 1.0}
    params = {}
    for name, shape in config.shapes().items():
        if len(shape) == 1:
            params[name] = np.zeros(shape, np.float32)
        else:
            q, r = np.linalg.qr(rng.standard_normal((max(shape), min(shape))))
            q = q * np.sign(np.diag(r))
            q = q if q.shape == shape else q.T
            params[name] = (gains.get(name, np.sqrt(2.0)) * q).astype(np.float32)
    return params


def forward(params: Params, obs: Any, hidden: Any, xp: Any = np) -> tuple[Any, Any, Any]:
    """One step of the network on a batch: ``(logits [B, A], value [B], next hidden [B, H])``.

    Args:
      params: the weights (``init_params`` layout).
      obs: ``[B, obs_size]`` encoded observations.
      hidden: ``[B, H]`` the GRU state before this observation (ignored without a GRU; returned as is).
      xp: the array module, ``numpy`` or ``jax.numpy``.
    """
    x = xp.tanh(obs @ params["w1"] + params["b1"])
    if "gru_x" in params:
        hidden = gru(params, x, hidden, xp)
        x = hidden
    x = xp.tanh(x @ params["w2"] + params["b2"])
    return x @ params["w_pi"] + params["b_pi"], (x @ params["w_v"] + params["b_v"])[:, 0], hidden


def gru(params: Params, x: Any, h: Any, xp: Any = np) -> Any:
    """A GRU cell (Cho et al. 2014): gates from the input and the state, the reset gate on the state's part."""
    gx, gh = x @ params["gru_x"] + params["gru_bx"], h @ params["gru_h"] + params["gru_bh"]
    size = h.shape[-1]
    r = 1.0 / (1.0 + xp.exp(-(gx[:, :size] + gh[:, :size])))
    z = 1.0 / (1.0 + xp.exp(-(gx[:, size:2 * size] + gh[:, size:2 * size])))
    n = xp.tanh(gx[:, 2 * size:] + r * gh[:, 2 * size:])
    return (1.0 - z) * n + z * h


def masked_logits(logits: Any, mask: Any, xp: Any = np) -> Any:
    """Logits with illegal actions pushed to a very low value (never chosen, no NaN in the softmax)."""
    return xp.where(mask, logits, -1e9)


def save_policy(directory: str | Path, params: Params, config: PolicyConfig, *, encoder_source: str,
                extra: dict[str, Any] | None = None) -> Path:
    """Writes ``policy.npz`` (weights as float32 arrays, the config as JSON) and ``encoder.py`` into
    ``directory``; ``extra`` (JSON) goes beside the config (training record: seed, steps, win rate)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    (out / POLICY_FILE).write_bytes(policy_bytes(params, config, extra=extra))
    (out / ENCODER_FILE).write_text(encoder_source, encoding="utf-8")
    return out


def policy_bytes(params: Params, config: PolicyConfig, *, extra: dict[str, Any] | None = None) -> bytes:
    """The bytes of a ``policy.npz``: the weights as float32 arrays, the config and ``extra`` as JSON."""
    meta = json.dumps({"config": dataclasses.asdict(config), "extra": extra or {}})
    arrays: dict[str, Any] = {k: np.asarray(v, np.float32) for k, v in params.items()}
    buffer = io.BytesIO()
    np.savez(buffer, **{"config": np.array(meta)} | arrays)
    return buffer.getvalue()


def load_policy(directory: str | Path) -> tuple[dict[str, np.ndarray], PolicyConfig, dict[str, Any]]:
    """The weights, config and training record of a policy directory (``save_policy``), checked
    (``read_policy``).

    Raises:
      PolicyError: no readable ``policy.npz``, or one ``read_policy`` refuses.
    """
    file = Path(directory) / POLICY_FILE
    try:
        data = file.read_bytes()
    except OSError as e:
        raise PolicyError(f"{file}: not a readable policy file ({e.strerror or e})") from None
    return read_policy(data, where=str(file))


def read_policy(data: bytes, *, where: str) -> tuple[dict[str, np.ndarray], PolicyConfig, dict[str, Any]]:
    """The weights, config and training record in the bytes of a ``policy.npz``, read as untrusted input.

    Args:
      data: the file's bytes.
      where: the file's name in every error.

    Raises:
      PolicyError: not an npz of plain arrays (no pickles are loaded), a config that does not parse, or an
        array that is missing, extra, of the wrong shape or not finite (named).
    """
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as found:
            arrays = {k: found[k] for k in found.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise PolicyError(f"{where}: not a readable policy file ({e})") from None
    try:
        meta = json.loads(str(arrays.pop("config")))
        for key, value in meta["config"].items():  # exact types: a policy file is the bundle author's data
            if type(value) is not _CONFIG_TYPES.get(key):
                raise TypeError(f"config field {key!r} is {type(value).__name__}, not one of the PolicyConfig's")
        config = PolicyConfig(**meta["config"])
        shapes = config.shapes()
        extra = dict(meta.get("extra") or {})
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise PolicyError(f"{where}: the config is missing or malformed ({type(e).__name__}: {e})") from None
    if set(arrays) != set(shapes):
        raise PolicyError(f"{where}: arrays {sorted(arrays)} do not match the config's {sorted(shapes)}")
    for name, shape in shapes.items():
        if arrays[name].shape != shape or arrays[name].dtype.kind != "f" or not np.all(np.isfinite(arrays[name])):
            raise PolicyError(f"{where}: array {name!r} is {arrays[name].dtype}{arrays[name].shape}, expected "
                              f"finite floats of shape {shape}")
    return {k: v.astype(np.float32) for k, v in arrays.items()}, config, extra


class PPOAgent:
    """Plays a trained policy in the real game: observation -> encoder -> network -> the best legal action.

    Args:
      params, config: the policy (``load_policy``).
      encode: the observation encoder it was trained with (in a sandbox worker for untrusted code).
      game: the real game.
      greedy: play the most likely legal action (default) rather than sample.
      seed: the sampling seed (only used when not greedy).
    """

    def __init__(self, params: dict[str, np.ndarray], config: PolicyConfig, encode: Callable[[Any, int], Any],
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
        logits, _, self.hidden = forward(self.params, obs, self.hidden)
        legal = [a for a in state.legal_actions() if 0 <= a < self.config.num_actions]
        if not legal:
            raise IllegalMoveError(f"the PPO policy has {self.config.num_actions} actions, none of them legal here "
                                   f"({state.legal_actions()[:10]}): trained for another game?")
        scores = logits[0, legal]
        if self.greedy:
            return int(legal[int(np.argmax(scores))])
        p = np.exp(scores - scores.max())
        return int(legal[self.rng.choice(len(legal), p=p / p.sum())])
