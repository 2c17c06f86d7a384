# hostile: signals through a pidfd (fd 0 here: only seccomp decides whether the call reaches the kernel)
# job: call get_initial_state
# expect: static: line 10: access to attribute 'sys'
# ungated: error: PermissionError: [Errno 1] Operation not permitted

import random


def get_initial_state():
    random.Random.seed.__globals__["_os"].sys.modules["signal"].pidfd_send_signal(0, 0)
    return {}
