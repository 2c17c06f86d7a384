# hostile: deleting files
# job: call get_initial_state
# expect: static: line 6: import of 'os' is not allowed
# ungated: load: import of 'os' is not allowed

from os import remove


def get_initial_state():
    remove("/tmp/cwm-hostile-victim")
    return {}
