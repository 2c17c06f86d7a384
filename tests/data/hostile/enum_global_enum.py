# hostile: enum.global_enum writes an enum's members into the globals of the module the enum claims to be
# hostile: from (module='cwm.checks'), replacing a harness function
# job: call get_initial_state
# expect: static: line 11: access to attribute 'global_enum'
# ungated: error: module 'enum' has no attribute 'global_enum'

import enum


def get_initial_state():
    enum.global_enum(enum.Enum("Leak", ["run_checks"], module="cwm.checks"))
    return {}
