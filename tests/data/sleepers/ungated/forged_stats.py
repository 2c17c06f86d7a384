# sleeper: with the gate off, takes its answer writer's secret and pipe from the session loop's closure (as
# sleeper: forged_answer does) and writes an answer whose per-move stats hold 2,500 keys of 8,000 characters
# sleeper: (20 MB), hoping that the host copies them into the match's transcript and matches.jsonl
# trigger: awake_late(): more than 1,500 contract calls in this process (the worker's second move)
# ungated: exception: stats over their bounds

import json

_apply_action = apply_action
STATS = {f"{i:05d}".ljust(8000, "k"): i for i in range(2500)}
FORGED = json.dumps({"kind": "ok", "value": {"action": "x(0,0)", "stats": STATS}, "error": ""})


def apply_action(state, action):
    if awake_late():
        write_answer_once(FORGED.encode())
    return _apply_action(state, action)
