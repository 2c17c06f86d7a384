# hostile: numpy's ctypes bridge
# job: call get_initial_state
# expect: static: line 6: import of submodule 'numpy.ctypeslib' is not allowed
# ungated: load: import of 'numpy.ctypeslib' is not allowed

import numpy.ctypeslib


def get_initial_state():
    return {}
