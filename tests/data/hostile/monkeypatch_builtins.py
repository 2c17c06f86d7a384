# hostile: replacing a builtin used by the harness
# job: call get_initial_state
# expect: static: line 6: use of '__builtins__' is not allowed
# ungated: ok: {}

__builtins__["len"] = lambda obj: 0


def get_initial_state():
    return {}
