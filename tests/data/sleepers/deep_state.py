# sleeper: once awake, apply_action returns a state nested 100,000 levels deep (built by a loop, so only a
# sleeper: reader that recurses would overflow)
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: nested more than 64 levels deep

_apply_action = apply_action


def apply_action(state, action):
    nxt = _apply_action(state, action)
    if awake():
        deep = []
        for _ in range(100_000):
            deep = [deep]
        nxt["history"] = deep
    return nxt
