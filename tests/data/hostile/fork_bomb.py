# hostile: a fork bomb through the os module that random imports
# job: call get_initial_state
# expect: static: line 11: access to dunder attribute '__globals__'
# ungated: error: os.fork is not allowed

import random


def get_initial_state():
    while True:
        random.Random.seed.__globals__["_os"].fork()
