# hostile: opens a pidfd on the zygote and SIGSTOPs it (security review r3: kill_host.py)
# job: call get_initial_state
# expect: static: line 10: access to dunder attribute '__globals__'
# ungated: error: PermissionError

import random


def get_initial_state():
    os = random.Random.seed.__globals__["_os"]
    signal = os.sys.modules["signal"]
    signal.pidfd_send_signal(os.pidfd_open(os.getppid()), signal.SIGSTOP)
    return {}
