# hostile: raising SystemExit to end the checking process
# job: call get_initial_state
# expect: error: SystemExit

def get_initial_state():
    raise SystemExit(0)
