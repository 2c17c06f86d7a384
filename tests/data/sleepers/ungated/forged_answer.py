# sleeper: with the gate off, walks the frames up to the session's loop, takes its answer writer's secret and
# sleeper: pipe from the closure, and writes its own answer: a move the real game does not have, with escapes
# trigger: awake_late(): more than 1,500 contract calls in this process (the worker's second move)
# ungated: illegal: not legal in the real game

import json

_apply_action = apply_action
FORGED = json.dumps({"kind": "ok", "value": {"action": "o(9,9)\x1b[2J", "stats": {"won": 1}}, "error": ""})


def apply_action(state, action):
    if awake_late():
        write_answer_once(FORGED.encode())
    return _apply_action(state, action)
