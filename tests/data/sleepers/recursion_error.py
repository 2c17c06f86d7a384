# sleeper: once awake, apply_action recurses without end (a RecursionError at the interpreter's limit)
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: RecursionError

_apply_action = apply_action


def _descend(n):
    return _descend(n + 1) + 1


def apply_action(state, action):
    if awake():
        _descend(0)
    return _apply_action(state, action)
