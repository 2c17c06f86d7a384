# hostile: 'continue' inside 'finally' discards every exception, the time-budget interrupt included, without
# hostile: naming BaseException
# job: call get_initial_state
# expect: static: line 14: return, break or continue inside 'finally' is not allowed
# ungated: timeout: kept running after it was interrupted


def get_initial_state():
    while True:
        try:
            while True:
                pass
        finally:
            continue
