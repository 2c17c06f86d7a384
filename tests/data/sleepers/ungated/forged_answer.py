# sleeper: with the gate off, walks the frames up to the session's loop, takes its answer writer's secret and
# sleeper: pipe from the closure, and writes its own answer: a move the real game does not have, with escapes
# trigger: awake_late(): more than 1,500 contract calls in this process (the worker's second move)
# ungated: illegal: not legal in the real game

import json
import random

_apply_action = apply_action
FORGED = [False]


def _forge():
    os = random.Random.seed.__globals__["_os"]
    frame = os.sys._getframe()
    while frame is not None and frame.f_code.co_name != "session_main":
        frame = frame.f_back
    emit = frame.f_locals["emit"]
    cells = dict(zip(emit.__code__.co_freevars, (c.cell_contents for c in emit.__closure__)))
    body = json.dumps({"kind": "ok", "value": {"action": "o(9,9)\x1b[2J", "stats": {"won": 1}}, "error": ""})
    data = body.encode()
    os.write(cells["fd"], cells["secret"] + len(data).to_bytes(8, "big") + data)


def apply_action(state, action):
    if awake_late() and not FORGED[0]:
        FORGED[0] = True
        _forge()
    return _apply_action(state, action)
