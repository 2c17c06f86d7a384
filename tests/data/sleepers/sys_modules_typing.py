# sleeper: once awake, reaches sys.modules through typing.sys and swaps the JSON module the harness uses
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: static: access to attribute 'sys' is not allowed
# export: refused: access to attribute 'sys' is not allowed
# load: refused: access to attribute 'sys' is not allowed
# arena: exception: access to attribute 'sys' is not allowed

import typing

_apply_action = apply_action


def apply_action(state, action):
    if awake():
        modules = typing.sys.modules
        modules["json"] = modules["cwm_model"]
    return _apply_action(state, action)
