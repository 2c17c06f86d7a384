# hostile: raising SystemExit to end the checking process
# job: call get_initial_state
# expect: static: line 7: use of 'SystemExit' is not allowed
# ungated: error: SystemExit

def get_initial_state():
    raise SystemExit(0)
