"""Several PPO seeds, the best kept: ``EnvSource`` names what to train in as plain data, so each seed can run
in another process (a local pool or Ray, ``cwm.executors``); ``train_seeds`` saves the best policy
against random and plots every seed's learning curve (the paper trained 5 seeds and kept the best).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cwm import games
from cwm.bundle.policy import save_policy_dir
from cwm.contract import ENCODER_API
from cwm.executors import InlineExecutor, JobCrashed
from cwm.games.oracle import oracle_model
from cwm.model import ActionCodec, WorldModel
from cwm.ppo.contained import train_twin_contained
from cwm.ppo.train import Envs, TrainConfig, TrainResult, kept_row, rank, train
from cwm.sandbox import load_source
from cwm.sandbox.training import ContainedEnvs
from planners.env import LocalEnvs


@dataclasses.dataclass(frozen=True)
class EnvSource:
    """The games to train in, as picklable data.

    Attributes:
      game: the real game (its action ids).
      encoder_source: the observation encoder's code.
      model_source: the world model's code; empty for the oracle CWM of ``game`` (trusted, in-process).
      contained: run the model and the encoder in a hardened training worker (the default: they are
        untrusted); ``False`` loads them (gated) in the training process, for code you have read.
      twin_source: a JAX twin of the model (``jax_twin.py``): when given, each seed trains entirely in JAX on
        the twin in one sandbox child (``cwm.ppo.contained``), reading the twin's observation tensor (which
        the bundle's load checked against ``encoder_source``); the model is not stepped, and there are no
        checkpoints.
    """

    game: str
    encoder_source: str
    model_source: str = ""
    contained: bool = True
    twin_source: str = ""

    @contextlib.contextmanager
    def open(self) -> Iterator[Envs]:
        """The ``Envs`` (a training worker is closed on exit)."""

        if self.model_source and self.contained:

            with ContainedEnvs(self.model_source, self.encoder_source, self.game) as envs:
                yield envs
            return
        encode = load_source(self.encoder_source, name="ppo_encoder", api=ENCODER_API).encode
        if self.model_source:

            module = load_source(self.model_source, name="ppo_model")
            model = WorldModel(module, codec=ActionCodec.from_game(games.load_game(self.game)))
        else:

            model = oracle_model(self.game)
        yield LocalEnvs.of_model(model, encode)


def _train_one(job: tuple[EnvSource, TrainConfig, str, bool]) -> TrainResult:
    """One seed's run (a top-level function: executors pickle it)."""
    source, config, out_dir, progress = job
    if source.twin_source:
        return train_twin_contained(source.twin_source, config, game=source.game)
    with source.open() as envs:
        return train(envs, config, out_dir=out_dir, game=source.game, progress=progress)


def train_seeds(source: EnvSource, config: TrainConfig, seeds: Sequence[int], *, out_dir: str | Path,
                executor: Any = None, progress: bool = True) -> TrainResult:
    """Trains one run per seed (``out_dir/seed-N``, each resumable), saves the best against random (by
    ``config.keep``: the best score, or the fewest losses in the kept policy's worse seat, then the score) as the
    policy directory ``out_dir/policy`` (``cwm.bundle.policy.save_policy_dir``, with every seed's curve in its record)
    and plots the learning curves as ``out_dir/curve.png``.

    Args:
      source: the games.
      config: the settings (its ``seed`` is replaced by each of ``seeds``).
      seeds: one run each.
      out_dir: the run directory.
      executor: a ``cwm.executors`` executor (``make_executor("ray")``: one seed per Ray worker); ``None``
        runs the seeds one after another here.

    Raises:
      JobCrashed: a seed's worker process died (run again: every seed resumes from its checkpoint).
      progress: show each run's progress bar.
    """

    out = Path(out_dir)
    jobs = [(source, dataclasses.replace(config, seed=s), str(out / f"seed-{s}"), progress) for s in seeds]
    results = list((executor or InlineExecutor()).imap_unordered(_train_one, jobs))
    for r in results:
        if isinstance(r, JobCrashed):  # a seed's process died (the memory limit): its checkpoint resumes it
            raise r
    results.sort(key=lambda r: r.seed)
    best = max(results, key=lambda r: _seed_rank(r, config.keep))
    record = {"seed": best.seed, "best_score": best.best_score, "config": dataclasses.asdict(config),
              "curves": {str(r.seed): r.curve for r in results}}
    save_policy_dir(out / "policy", best.params, best.policy, encoder_source=source.encoder_source, extra=record)
    plot_curves(results, out / "curve.png", game=source.game)
    return best


def _seed_rank(result: TrainResult, keep: str) -> tuple[float, ...]:
    """How seeds compare: by their best score, or (``keep="worst_seat"``) as ``record`` ranks their kept rows."""
    if keep == "score":
        return (result.best_score,)
    return rank(kept_row(result.curve, keep), keep)


def plot_curves(results: Sequence[TrainResult], file: str | Path, *, game: str = "") -> Path:
    """Win rate against random over environment steps, one line per seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for r in results:
        ax.plot([row["steps"] for row in r.curve], [row["win_rate"] for row in r.curve], label=f"seed {r.seed}")
    ax.set(xlabel="environment steps", ylabel="win rate vs random", title=f"PPO in the world model: {game}",
           ylim=(0, 1))
    ax.legend()
    fig.tight_layout()
    fig.savefig(file, dpi=100)
    plt.close(fig)
    return Path(file)
