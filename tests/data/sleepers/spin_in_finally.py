# sleeper: once awake, apply_action spins in a 'finally' block, so the move budget's interrupt raised in the
# sleeper: 'try' only starts the next loop (the gate allows loops in 'finally'; it refuses jumps out of it)
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: timeout: kept running after its budget's interrupt and was ended

_apply_action = apply_action


def apply_action(state, action):
    if awake():
        try:
            while True:
                pass
        finally:
            while True:
                pass
    return _apply_action(state, action)
