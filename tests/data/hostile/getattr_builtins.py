# hostile: getattr on __builtins__ to find eval
# job: call get_initial_state
# expect: static: line 7: use of 'getattr' is not allowed
# ungated: error: NameError

def get_initial_state():
    ev = getattr(__builtins__, "ev" + "al")
    return {"x": ev("1 + 1")}
