# hostile: reaching sys through typing.sys (a public attribute of an allowed module)
# job: call get_initial_state
# expect: static: line 10: access to attribute 'sys' is not allowed
# ungated: error: module 'typing' has no attribute 'sys'

import typing


def get_initial_state():
    typing.sys.modules["json"] = None
    return {}
