# hostile: a background thread that outlives the call
# job: call get_initial_state
# expect: static: line 6: import of 'threading' is not allowed
# ungated: load: import of 'threading' is not allowed

import threading


def get_initial_state():
    threading.Thread(target=lambda: None).start()
    return {}
