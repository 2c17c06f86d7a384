# hostile: globals() to reach __builtins__
# job: call get_initial_state
# expect: static: line 7: use of 'globals' is not allowed
# ungated: error: NameError

def get_initial_state():
    return {"n": len(globals())}
