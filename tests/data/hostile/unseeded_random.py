# hostile: non-determinism through the global random generator
# job: call get_initial_state
# expect: static: line 10: random.choice() draws from the global generator
# ungated: error: nondeterminism: the model drew from the global random generator

import random


def get_initial_state():
    return {"first": random.choice([0, 1])}
