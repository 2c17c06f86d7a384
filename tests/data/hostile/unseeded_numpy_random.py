# hostile: non-determinism through numpy's global generator
# job: call get_initial_state
# expect: static: line 10: numpy.random.randint() draws from the global generator
# ungated: error: nondeterminism: the model drew from numpy's global random generator

import numpy as np


def get_initial_state():
    return {"first": int(np.random.randint(2))}
