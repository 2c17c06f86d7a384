# hostile: operator.attrgetter with a run-time string, taken from a Cython function's globals
# job: call get_initial_state
# expect: static: line 12: access to attribute 'attrgetter'
# ungated: error: module 'random' has no attribute '_os'

import random

import numpy as np


def get_initial_state():
    getter = np.random.default_rng.func_globals["operator"].attrgetter("_" + "os")
    return {"pid": getter(random).getpid()}
