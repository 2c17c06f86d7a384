# hostile: reading /etc/passwd through the os module that random imports
# job: call get_initial_state
# expect: static: line 10: access to dunder attribute '__globals__'
# ungated: error: opening '/etc/passwd' is not allowed

import random


def get_initial_state():
    fd = random.Random.seed.__globals__["_os"].open("/etc/passwd", 0)
    return {"passwd": random.Random.seed.__globals__["_os"].read(fd, 4096).decode()}
