# hostile: typing.get_type_hints evaluates a string annotation as code
# job: call get_initial_state
# expect: static: line 14: access to attribute 'get_type_hints' is not allowed
# ungated: error: module 'typing' has no attribute 'get_type_hints'

import typing


def payload(x: "__import__('os').system('touch /tmp/cwm-hostile-type-hints')"):
    return x


def get_initial_state():
    return {"hints": str(typing.get_type_hints(payload))}
