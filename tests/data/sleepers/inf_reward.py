# sleeper: once awake, get_rewards returns +inf and -inf
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: a reward must be finite, got inf

_get_rewards = get_rewards


def get_rewards(state):
    if awake():
        return [float("inf"), float("-inf")]
    return _get_rewards(state)
