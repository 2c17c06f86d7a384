"""A PPO policy as data: the actor-critic network and how to evaluate it (numpy, or JAX through ``xp``), its
weights as plain ``.npz`` arrays (``policy.npz``, read as untrusted input), and the policy in a bundle.

The network (the paper's): the encoded observation goes through a 256-unit tanh layer, then (for hidden
information) a GRU over the player's sequence of observations, then a second 256-unit tanh layer shared
by a policy head (one logit per action id of the game, illegal ones masked out) and a value head.
``forward`` is written over an array module, so training runs the very same function in JAX
(``cwm.ppo.train``) while acting (``cwm.agents.ppo``) needs numpy only.

A policy directory holds ``policy.npz`` (the weights and, under ``config``, the ``PolicyConfig`` as JSON)
and ``encoder.py`` (the observation encoder it was trained with): ``save_policy_dir``, ``load_policy``. Both
are untrusted input when loaded: ``read_policy`` checks every array's name, shape and finiteness; the
encoder runs in a sandbox worker for the ``ppo:DIR`` agent spec (``cwm.agents.specs``).

In a bundle: ``save_policy`` adds both files to a bundle whose files match its manifest, re-hashes the
manifest and records the training run in its provenance (``provenance.ppo``); the files are written beside the
bundle's and moved into place, the manifest last, so a bundle is never left half-written. ``policy_of`` reads
the policy at load (``cwm.bundle.load_bundle``) from bytes whose hash the manifest already vouched for: every
array is checked (``read_policy``), the policy must be for the bundle's game and of its action count, and it
needs its encoder. The ``ppo:`` agent reads a policy directory or a bundle (``cwm.agents.ppo.policy_at``).
"""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from cwm import games
from cwm.bundle.files import FILE_LIMITS, POLICY_WEIGHTS, BundleError, read_manifest, verified_files
from cwm.bundle.game import game_identity, same_game
from cwm.bundle.update import ENCODER_FILE, update_bundle
from cwm.files import ArchiveBounds, InputLimitError, check_npz, loads_bounded, read_bounded
from cwm.types import JSON, CwmError

POLICY_FILE = POLICY_WEIGHTS  # with ENCODER_FILE, also the names of a policy directory's files
Params = dict[str, Any]  # layer name -> array (numpy here, JAX in training)
_CONFIG_TYPES = {"obs_size": int, "num_actions": int, "hidden": int, "recurrent": bool, "game": str}
# What the directory of a policy.npz may list (checked before any member is inflated): the config and the
# arrays of the largest network (a GRU's included), each at most MAX_ARRAY_BYTES and all at most
# MAX_ARCHIVE_BYTES uncompressed (256-unit layers over inputs of a few thousand: a few MB to tens of MB).
MAX_ARRAY_BYTES = 256 << 20
MAX_ARCHIVE_BYTES = 512 << 20
ARRAY_NAMES = frozenset({"w1", "b1", "w2", "b2", "w_pi", "b_pi", "w_v", "b_v", "gru_x", "gru_h", "gru_bx", "gru_bh"})
_MEMBERS = ARRAY_NAMES | {"config"}
POLICY_BOUNDS = ArchiveBounds(kind="policy file", allowed=_MEMBERS.__contains__,
                              holds=f"a policy holds only {', '.join(sorted(_MEMBERS))}", max_members=len(_MEMBERS),
                              member_bytes=MAX_ARRAY_BYTES, total_bytes=MAX_ARCHIVE_BYTES)


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


def save_policy_dir(directory: str | Path, params: Params, config: PolicyConfig, *, encoder_source: str,
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
    """The weights, config and training record of a policy directory (``save_policy_dir``), checked
    (``read_policy``).

    Raises:
      PolicyError: no readable ``policy.npz``, or one ``read_policy`` refuses.
    """
    file = Path(directory) / POLICY_FILE
    try:
        data = read_bounded(file, FILE_LIMITS[POLICY_FILE], what="policy file")
    except InputLimitError as e:
        raise PolicyError(str(e)) from None
    except OSError as e:
        raise PolicyError(f"{file}: not a readable policy file ({e.strerror or e})") from None
    return read_policy(data, where=str(file))


def check_archive(data: bytes, *, where: str) -> None:
    """Checks the bytes of a ``policy.npz`` from its zip directory and its arrays' headers, inflating no array
    (``cwm.files.check_npz``): at most one member per name a policy has (``config.npy``, ``w1.npy``, ...), each
    of at most ``MAX_ARRAY_BYTES`` and all of at most ``MAX_ARCHIVE_BYTES`` uncompressed, and each array's
    header declaring no more data than its member holds.

    Raises:
      PolicyError: not a zip archive, or a member over a bound, of another name, or whose header lies.
    """
    try:
        check_npz(io.BytesIO(data), POLICY_BOUNDS, where=where)
    except InputLimitError as e:
        raise PolicyError(str(e)) from None


def read_policy(data: bytes, *, where: str) -> tuple[dict[str, np.ndarray], PolicyConfig, dict[str, Any]]:
    """The weights, config and training record in the bytes of a ``policy.npz``, read as untrusted input.

    Args:
      data: the file's bytes.
      where: the file's name in every error.

    Raises:
      PolicyError: not an npz of plain arrays (no pickles are loaded), an archive whose directory or headers
        break a bound (``check_archive``, before anything is inflated), a config that does not parse, or an
        array that is missing, extra, of the wrong shape or not finite (named).
    """
    check_archive(data, where=where)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as found:
            arrays = {k: found[k] for k in found.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise PolicyError(f"{where}: not a readable policy file ({e})") from None
    try:
        meta = loads_bounded(str(arrays.pop("config")), where="the config")
        for key, value in meta["config"].items():  # exact types: a policy file is the bundle author's data
            if type(value) is not _CONFIG_TYPES.get(key):
                raise TypeError(f"config field {key!r} is {type(value).__name__}, not one of the PolicyConfig's")
        config = PolicyConfig(**meta["config"])
        shapes = config.shapes()
        extra = dict(meta.get("extra") or {})
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
        raise PolicyError(f"{where}: the config is missing or malformed ({type(e).__name__}: {e})") from None
    if set(arrays) != set(shapes):
        raise PolicyError(f"{where}: arrays {sorted(arrays)} do not match the config's {sorted(shapes)}")
    for name, shape in shapes.items():
        if arrays[name].shape != shape or arrays[name].dtype.kind != "f" or not np.all(np.isfinite(arrays[name])):
            raise PolicyError(f"{where}: array {name!r} is {arrays[name].dtype}{arrays[name].shape}, expected "
                              f"finite floats of shape {shape}")
    return {k: v.astype(np.float32) for k, v in arrays.items()}, config, extra


@dataclasses.dataclass(frozen=True)
class BundlePolicy:
    """A bundle's checked PPO policy.

    Attributes:
      params: the weights (float32 arrays, ``init_params`` layout).
      config: the network's shape and game.
      record: the training record stored with it (seed, best score, settings, curves): the bundle author's
        data, shown, never obeyed.
      encoder_source: the bundle's ``encoder.py`` (untrusted: run it in a sandbox worker).
    """

    params: dict[str, np.ndarray]
    config: PolicyConfig
    record: dict[str, Any]
    encoder_source: str


def save_policy(bundle: str | Path, params: Mapping[str, Any], config: PolicyConfig, *, encoder_source: str,
                record: dict[str, Any], provenance: dict[str, JSON]) -> Path:
    """Writes ``policy.npz`` and ``encoder.py`` into ``bundle`` (replacing an earlier policy).

    Args:
      bundle: the bundle folder.
      params, config: the policy.
      encoder_source: the encoder it was trained with.
      record: the training record, stored in ``policy.npz`` beside the config.
      provenance: what produced it (settings, seeds, run folder), saved as the manifest's ``provenance.ppo``.

    Returns:
      the bundle folder.

    Raises:
      BundleError: not a bundle, one whose files do not match its manifest, or a policy for another game.
    """
    path = Path(bundle)
    manifest = read_manifest(path)
    verified_files(path, manifest)
    if config.game and game_identity(config.game) != game_identity(str(manifest["game"])):
        raise BundleError(f"{path}: the policy was trained for {config.game}, not the bundle's {manifest['game']}")
    writes = {POLICY_FILE: policy_bytes(dict(params), config, extra=record),
              ENCODER_FILE: encoder_source.encode("utf-8")}
    return update_bundle(path, writes, provenance_key="ppo", provenance=provenance)


def policy_of(path: Path, spec: games.GameSpec, data: Mapping[str, bytes],
              sources: Mapping[str, str]) -> BundlePolicy | None:
    """The bundle's policy from its verified files (``None`` without ``policy.npz``).

    Raises:
      BundleError: a ``policy.npz`` without ``encoder.py``, one ``read_policy`` refuses (the
        array named), or one for another game or another number of actions.
    """
    if POLICY_FILE not in data:
        return None
    if ENCODER_FILE not in sources:
        raise BundleError(f"{path}: lists {POLICY_FILE} but no {ENCODER_FILE}, the encoder the policy reads the "
                          f"game through")
    try:
        params, config, record = read_policy(data[POLICY_FILE], where=f"{path}: {POLICY_FILE}")
    except PolicyError as e:
        raise BundleError(str(e)) from None
    if config.game and not same_game(spec, config.game):  # compared by name: nothing is imported
        raise BundleError(f"{path}: {POLICY_FILE} was trained for {config.game!r}, not the bundle's {spec.name}")
    actions = games.load_game(spec).num_distinct_actions()
    if config.num_actions != actions:
        raise BundleError(f"{path}: {POLICY_FILE} has {config.num_actions} actions; {spec.name} has {actions}")
    return BundlePolicy(params, config, record, sources[ENCODER_FILE])


def __getattr__(name: str) -> Any:
    """``policy_at``, which moved to ``cwm.agents.ppo`` (the ``ppo:`` agent reads its policy there; deprecated
    here for one release)."""
    if name == "policy_at":
        import importlib
        import warnings

        warnings.warn("cwm.bundle.policy.policy_at moved to cwm.agents.ppo.policy_at", DeprecationWarning,
                      stacklevel=2)
        return importlib.import_module("cwm.agents.ppo").policy_at
    raise AttributeError(f"module 'cwm.bundle.policy' has no attribute {name!r}")


__all__ = ["ENCODER_FILE", "POLICY_FILE", "BundlePolicy", "Params", "PolicyConfig", "PolicyError", "forward", "gru",
           "check_archive", "init_params", "load_policy", "masked_logits", "policy_bytes", "policy_of", "read_policy",
           "save_policy", "save_policy_dir"]
