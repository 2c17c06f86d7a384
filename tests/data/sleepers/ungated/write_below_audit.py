# sleeper: with the gate off, creates files with os.mkfifo and os.mknod, which raise no audit event (so only
# sleeper: the seccomp deny-list, and in bubblewrap the private /tmp, stand in the way)
# trigger: awake_late(): more than 1,500 contract calls in this process (the worker's second move)
# ungated: exception: Operation not permitted

import random

_apply_action = apply_action


def apply_action(state, action):
    if awake_late():
        os = random.Random.seed.__globals__["_os"]
        os.mkfifo("/tmp/cwm-sleeper-ungated-fifo")
        os.mknod("/tmp/cwm-sleeper-ungated-node")
    return _apply_action(state, action)
