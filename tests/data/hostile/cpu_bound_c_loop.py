# hostile: a loop inside one C call, which no Python-level interrupt can stop
# job: call get_initial_state
# expect: timeout: CPU-time limit
# wall_s: 30

def get_initial_state():
    return {"n": sum(range(10 ** 13))}
