# sleeper: with the gate off, closes every file descriptor it has (its answer pipe too) and then spins, so
# sleeper: the zygote sees the answer pipe end while the worker keeps running
# trigger: awake_late(): more than 1,500 contract calls in this process (the worker's second move)
# ungated: crash: the worker

import random

_apply_action = apply_action


def apply_action(state, action):
    if awake_late():
        random.Random.seed.__globals__["_os"].closerange(0, 1 << 16)
        while True:
            pass
    return _apply_action(state, action)
