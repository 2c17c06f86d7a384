# hostile: reaching os through an allowed module (random._os)
# job: call get_initial_state
# expect: static: line 10: access to attribute 'system' is not allowed
# ungated: error: module 'random' has no attribute '_os'

import random


def get_initial_state():
    random._os.system("touch /tmp/cwm-hostile-random-os")
    return {}
