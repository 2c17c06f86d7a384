# sleeper: with the gate off, takes its answer writer's secret and pipe from the session loop's closure (as
# sleeper: forged_answer does) and writes an answer nested 100,000 lists deep, hoping that reading it
# sleeper: overflows the zygote that relays answers to the host
# trigger: awake_late(): more than 1,500 contract calls in this process (the worker's second move)
# ungated: crash: the worker wrote a malformed answer

_apply_action = apply_action
DEEP = b'{"kind": "ok", "value": ' + b"[" * 100_000 + b"]" * 100_000 + b', "error": ""}'


def apply_action(state, action):
    if awake_late():
        write_answer_once(DEEP)
    return _apply_action(state, action)
