"""PPO inside a world model (the ``jax`` extra): vectorised games (``planners.env``), the learner, several
seeds with the best kept, and training a bundle's policy (``cwm train ppo``). The policy itself, as data and
its numpy network, is ``cwm.bundle.policy``; the agent that plays it is ``cwm.agents.ppo``."""

from cwm.ppo.bundle import TrainingEstimate, estimate_training, train_bundle, training_source
from cwm.ppo.seeds import EnvSource, train_seeds
from cwm.ppo.train import TrainConfig, TrainResult, ground_truth_envs, train
from planners.env import LocalEnvs, VectorEnv

__all__ = ["EnvSource", "LocalEnvs", "TrainConfig", "TrainResult", "TrainingEstimate", "VectorEnv",
           "estimate_training", "ground_truth_envs", "train", "train_bundle", "train_seeds", "training_source"]
