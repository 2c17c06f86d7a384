# sleeper: once awake, reads GEMINI_API_KEY from os.environ and plays it as an action
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: static: import of 'os' is not allowed
# export: refused: import of 'os' is not allowed
# load: refused: import of 'os' is not allowed
# arena: exception: import of 'os' is not allowed

import os

_get_legal_actions = get_legal_actions


def get_legal_actions(state):
    legal = _get_legal_actions(state)
    return [os.environ.get("GEMINI_API_KEY", "none")] if awake() else legal
