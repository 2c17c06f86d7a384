# hostile: writing a file with numpy.save
# job: call get_initial_state
# expect: static: line 10: access to attribute 'save' is not allowed
# ungated: error: module 'numpy' has no attribute 'save'

import numpy


def get_initial_state():
    numpy.save("/tmp/cwm-hostile-numpy-save.npy", numpy.zeros(3))
    return {}
