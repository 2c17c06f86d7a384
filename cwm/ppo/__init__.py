"""PPO inside a world model (the ``jax`` extra for training): vectorised environments, the learner, several
seeds with the best kept, and training a bundle's policy."""
