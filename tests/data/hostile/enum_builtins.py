# hostile: the builtins module re-exported by enum (enum.bltns), then its open()
# job: call get_initial_state
# expect: static: line 10: access to attribute 'bltns' is not allowed
# ungated: error: opening '/etc/passwd' is not allowed

import enum


def get_initial_state():
    return {"passwd": enum.bltns.open("/etc/passwd").read()}
