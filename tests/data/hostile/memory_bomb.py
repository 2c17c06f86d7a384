# hostile: one huge allocation
# job: call get_initial_state
# expect: memory: get_initial_state(...) exceeded the memory limit

def get_initial_state():
    return {"cells": [0] * (10 ** 10)}
