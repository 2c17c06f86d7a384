# hostile: non-determinism through the global random generator, hidden behind an alias
# job: call get_initial_state
# expect: error: nondeterminism: the model drew from the global random generator

import random

rng = random


def get_initial_state():
    return {"first": rng.random() < 0.5}
