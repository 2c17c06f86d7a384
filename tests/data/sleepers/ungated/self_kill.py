# sleeper: with the gate off, sends itself SIGKILL (signal.raise_signal: a signal to itself is allowed), so
# sleeper: the worker dies in the middle of a move without a word
# trigger: awake_late(): more than 1,500 contract calls in this process (the worker's second move)
# ungated: crash: SIGKILL

import random

_apply_action = apply_action


def apply_action(state, action):
    if awake_late():
        random.Random.seed.__globals__["__builtins__"]["__import__"]("signal").raise_signal(9)
    return _apply_action(state, action)
