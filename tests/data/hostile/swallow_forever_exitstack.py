# hostile: typing re-exports contextlib, whose ExitStack can swallow any exception (the budget interrupt too)
# job: call get_initial_state
# expect: static: line 11: access to attribute 'contextlib' is not allowed
# ungated: error: module 'typing' has no attribute 'contextlib'

import typing


def get_initial_state():
    while True:
        with typing.contextlib.ExitStack() as stack:
            stack.push(lambda *exc: True)
            while True:
                pass
