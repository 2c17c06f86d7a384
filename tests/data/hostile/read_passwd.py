# hostile: reading /etc/passwd
# job: call get_initial_state
# expect: static: line 7: use of 'open' is not allowed
# ungated: error: NameError

def get_initial_state():
    return {"passwd": open("/etc/passwd").read()}
