# hostile: reaches BaseException through a public method (ZeroDivisionError.mro()) to catch the time-budget
# hostile: interrupt forever
# job: call get_initial_state
# expect: static: line 9: access to attribute 'mro' is not allowed
# ungated: timeout: kept running after it was interrupted


def get_initial_state():
    everything = ZeroDivisionError.mro()[3]
    while True:
        try:
            while True:
                pass
        except everything:
            pass
