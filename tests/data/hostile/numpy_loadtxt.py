# hostile: reading /etc/hostname with numpy.loadtxt
# job: call get_initial_state
# expect: static: line 10: access to attribute 'loadtxt' is not allowed
# ungated: error: module 'numpy' has no attribute 'loadtxt'

import numpy as np


def get_initial_state():
    return {"host": str(np.loadtxt("/etc/hostname", dtype=str))}
