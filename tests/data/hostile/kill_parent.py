# hostile: killing the process that runs the checks
# job: call get_initial_state
# expect: static: line 10: access to dunder attribute '__globals__'
# ungated: error: os.kill is not allowed

import random


def get_initial_state():
    random.Random.seed.__globals__["_os"].kill(random.Random.seed.__globals__["_os"].getppid(), 9)
    return {}
