# hostile: writing a file outside any scratch space
# job: call get_initial_state
# expect: static: line 7: use of 'open' is not allowed
# ungated: error: NameError

def get_initial_state():
    with open("/tmp/cwm-hostile-file-write", "w") as f:
        f.write("pwned")
    return {}
