# hostile: a shell command through os.system
# job: call get_initial_state
# expect: static: line 6: import of 'os' is not allowed
# ungated: load: import of 'os' is not allowed

import os

os.system("touch /tmp/cwm-hostile-os-system")


def get_initial_state():
    return {}
