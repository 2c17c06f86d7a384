# hostile: exit() to end the checking process
# job: call get_initial_state
# expect: static: line 7: use of 'exit' is not allowed
# ungated: error: NameError

def get_initial_state():
    exit(0)
