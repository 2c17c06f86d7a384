# hostile: killing the process that runs the checks
# job: call get_initial_state
# expect: static: line 10: access to private attribute '_os'
# ungated: error: os.kill is not allowed

import random


def get_initial_state():
    random._os.kill(random._os.getppid(), 9)
    return {}
