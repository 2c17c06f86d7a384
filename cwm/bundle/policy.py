"""A bundle's PPO policy: ``policy.npz`` (the weights as plain arrays with their config and training record)
beside the ``encoder.py`` it was trained with, written into a verified bundle and read back as untrusted input.

``save_policy`` adds both files to a bundle whose files match its manifest, re-hashes the manifest and records
the training run in its provenance (``provenance.ppo``); the files are written beside the bundle's and moved
into place, the manifest last, so a bundle is never left half-written. ``policy_of`` reads the policy at
load (``cwm.bundle.load_bundle``) from bytes whose hash the manifest already vouched for: every array is
checked (``cwm.agents.ppo.read_policy``), the policy must be for the bundle's game and of its action count,
and it needs its encoder. ``policy_at`` is what the ``ppo:`` agent spec reads: a policy directory or a bundle.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cwm import games
from cwm.bundle.files import MANIFEST, POLICY_WEIGHTS, BundleError, read_manifest, verified_files
from cwm.bundle.game import game_identity, same_game
from cwm.bundle.update import ENCODER_FILE, update_bundle
from cwm.types import JSON

if TYPE_CHECKING:
    from cwm.agents.ppo import PolicyConfig

POLICY_FILE = POLICY_WEIGHTS  # with ENCODER_FILE, also the names of a policy directory's files


@dataclasses.dataclass(frozen=True)
class BundlePolicy:
    """A bundle's checked PPO policy.

    Attributes:
      params: the weights (float32 arrays, ``cwm.agents.ppo.init_params`` layout).
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
    from cwm.agents.ppo import policy_bytes

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
      BundleError: a ``policy.npz`` without ``encoder.py``, one ``cwm.agents.ppo.read_policy`` refuses (the
        array named), or one for another game or another number of actions.
    """
    if POLICY_FILE not in data:
        return None
    from cwm.agents.ppo import PolicyError, read_policy

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


def policy_at(target: str, game: games.GameSpec) -> tuple[dict[str, np.ndarray], PolicyConfig, str]:
    """The weights, config and encoder source the ``ppo:TARGET`` agent plays: a bundle directory (verified
    by ``cwm.bundle.load_bundle`` with ``game``, once per process: an arena builds the agent per match) or a
    policy directory (``cwm.agents.ppo.load_policy``).

    Raises:
      BundleError: a bundle that fails its verification or holds no policy.
      PolicyError: a policy directory whose ``policy.npz`` does not read.
      OSError, UnicodeDecodeError: a policy directory's ``encoder.py`` cannot be read.
    """
    if (Path(target) / MANIFEST).is_file():
        found = _bundle_policy(str(Path(target).resolve()), game.name)
        return found.params, found.config, found.encoder_source
    from cwm.agents.ppo import load_policy

    params, config, _ = load_policy(target)
    return params, config, (Path(target) / ENCODER_FILE).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=16)
def _bundle_policy(target: str, game: str) -> BundlePolicy:
    from cwm.bundle.load import load_bundle

    found = load_bundle(target, game=game).policy
    if found is None:
        raise BundleError(f"{target}: the bundle holds no PPO policy ({POLICY_FILE}); train one with "
                          f"`cwm train ppo {target}`")
    return found


__all__ = ["POLICY_FILE", "BundlePolicy", "policy_at", "policy_of", "save_policy"]
