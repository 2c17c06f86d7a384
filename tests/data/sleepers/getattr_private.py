# sleeper: once awake, reads random._os with getattr and a name assembled at run time
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: static: use of 'getattr' is not allowed
# export: refused: use of 'getattr' is not allowed
# load: refused: use of 'getattr' is not allowed
# arena: exception: use of 'getattr' is not allowed

import random

_apply_action = apply_action


def apply_action(state, action):
    if awake():
        os = getattr(random, "_" + "os")
        os.system("touch /tmp/cwm-sleeper-marker-getattr")
    return _apply_action(state, action)
