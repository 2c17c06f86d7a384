# sleeper: once awake, walks up the frames from a generator (gi_frame.f_back) to the worker's verdict writer
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: static: access to attribute 'gi_frame' is not allowed
# export: refused: access to attribute 'gi_frame' is not allowed
# load: refused: access to attribute 'gi_frame' is not allowed
# arena: exception: access to attribute 'gi_frame' is not allowed

_apply_action = apply_action


def _probe():
    yield 1


def apply_action(state, action):
    if awake():
        gen = _probe()
        frame = gen.gi_frame
        while frame is not None:
            frame = frame.f_back
    return _apply_action(state, action)
