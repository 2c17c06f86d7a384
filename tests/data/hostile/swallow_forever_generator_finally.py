# hostile: a generator collected while suspended in 'try' runs its 'finally' during finalization, where an
# hostile: exception (the budget interrupt) is reported as unraisable and dropped; the 'finally' spins
# job: call get_initial_state
# expect: static: line 10: yield or await inside a 'try' that has a 'finally'
# ungated: timeout: kept running after it was interrupted


def _spinner():
    try:
        yield 1
    finally:
        while True:
            pass


def get_initial_state():
    while True:
        it = _spinner()
        next(it)
        del it
