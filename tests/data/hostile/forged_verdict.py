# hostile: catches the sandbox's interrupt and raises a forged one that claims the job went fine
# job: call get_initial_state
# expect: static: line 11: use of 'BaseException' is not allowed
# ungated: error: the model raised a forged sandbox verdict


def get_initial_state():
    try:
        while True:
            pass
    except BaseException as interrupt:
        raise type(interrupt)("ok", "") from None
