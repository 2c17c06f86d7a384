# sleeper: once awake, get_rewards returns an int of 5,000 digits (too large for a float)
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: a reward must be finite

_get_rewards = get_rewards


def get_rewards(state):
    if awake():
        return [10 ** 5000, -(10 ** 5000)]
    return _get_rewards(state)
