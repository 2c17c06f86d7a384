# hostile: ignoring the alarm signal so the time budget never fires
# job: call get_initial_state
# expect: static: line 6: import of 'signal' is not allowed
# ungated: load: import of 'signal' is not allowed

import signal

signal.signal(signal.SIGALRM, signal.SIG_IGN)


def get_initial_state():
    return {}
