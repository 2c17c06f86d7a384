# hostile: the builtins module re-exported by enum (enum.bltns), then its open()
# job: call get_initial_state
# expect: static: line 10: access to attribute 'bltns' is not allowed
# ungated: error: module 'enum' has no attribute 'bltns'

import enum


def get_initial_state():
    return {"passwd": enum.bltns.open("/etc/passwd").read()}
