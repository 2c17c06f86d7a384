# hostile: reading /etc/hostname with numpy.loadtxt
# job: call get_initial_state
# expect: static: line 11: access to attribute 'loadtxt' is not allowed
# ungated: error: opening '/etc/hostname' is not allowed
# ungated-bwrap: error: FileNotFoundError: /etc/hostname not found

import numpy as np


def get_initial_state():
    return {"host": str(np.loadtxt("/etc/hostname", dtype=str))}
