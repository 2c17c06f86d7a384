# hostile: os._exit through random's os, ending the process without a result
# job: call get_initial_state
# expect: static: line 10: access to private attribute '_exit'
# ungated: crash: exited with status 0 without a result

import random


def get_initial_state():
    random.Random.seed.__globals__["_os"]._exit(0)
