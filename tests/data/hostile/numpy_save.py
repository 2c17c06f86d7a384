# hostile: writing a file with numpy.save
# job: call get_initial_state
# expect: static: line 10: access to attribute 'save' is not allowed
# ungated: error: opening '/tmp/cwm-hostile-numpy-save.npy' is not allowed

import numpy


def get_initial_state():
    numpy.save("/tmp/cwm-hostile-numpy-save.npy", numpy.zeros(3))
    return {}
