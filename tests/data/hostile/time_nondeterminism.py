# hostile: non-determinism through the clock
# job: call get_initial_state
# expect: static: line 6: import of 'time' is not allowed
# ungated: load: import of 'time' is not allowed

import time


def get_initial_state():
    return {"first": int(time.time()) % 2}
