# hostile: memory grown step by step (numpy blocks of 80 MB) until something gives
# job: call get_initial_state
# expect: memory: get_initial_state(...) exceeded the memory limit

import numpy as np


def get_initial_state():
    blocks = []
    while True:
        blocks.append(np.empty(10 ** 7))
