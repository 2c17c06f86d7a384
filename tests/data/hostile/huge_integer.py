# hostile: an integer with a billion digits
# job: call get_initial_state
# expect: timeout: get_initial_state(...) ran longer than the per-call budget

def get_initial_state():
    return {"n": 10 ** (10 ** 9) % 7}
