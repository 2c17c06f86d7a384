# hostile: unbounded recursion
# job: call get_initial_state
# expect: error: RecursionError

def get_initial_state():
    return get_initial_state()
