# sleeper: with the gate off, imports time with the real __import__ and sleeps for an hour in one blocking
# sleeper: call (no CPU used, so no CPU budget fires: the zygote's 'asleep' rule must end it)
# trigger: awake_late(): more than 1,500 contract calls in this process (the worker's second move)
# ungated: timeout: asleep for 10 s

import random

_apply_action = apply_action


def apply_action(state, action):
    if awake_late():
        random.Random.seed.__globals__["__builtins__"]["__import__"]("time").sleep(3600)
    return _apply_action(state, action)
