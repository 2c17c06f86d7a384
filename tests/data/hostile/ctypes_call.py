# hostile: calling libc through ctypes
# job: call get_initial_state
# expect: static: line 6: import of 'ctypes' is not allowed
# ungated: load: import of 'ctypes' is not allowed

import ctypes


def get_initial_state():
    ctypes.CDLL(None).system(b"touch /tmp/cwm-hostile-ctypes")
    return {}
