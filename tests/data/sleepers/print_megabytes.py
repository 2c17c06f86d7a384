# sleeper: once awake, every apply_action prints a megabyte (a worker's output goes to a sink that keeps
# sleeper: 64 KiB), and the model keeps playing correctly
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: plays

_apply_action = apply_action
SPAM = "GEMINI_API_KEY? " * 65536


def apply_action(state, action):
    if awake():
        print(SPAM)
    return _apply_action(state, action)
