# sleeper: get_rewards spins forever once awake
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: timeout: more than its budget of

_get_rewards = get_rewards


def get_rewards(state):
    while awake():
        pass
    return _get_rewards(state)
