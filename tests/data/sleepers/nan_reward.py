# sleeper: once awake, get_rewards returns NaN for both players
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: a reward must be finite, got nan

_get_rewards = get_rewards


def get_rewards(state):
    if awake():
        return [float("nan"), float("nan")]
    return _get_rewards(state)
