# hostile: an infinite loop at import time
# job: call get_initial_state
# expect: timeout: the module body ran longer than the per-call budget

while True:
    pass


def get_initial_state():
    return {}
