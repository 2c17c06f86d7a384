# hostile: __import__ to reach os
# job: call get_initial_state
# expect: static: line 7: use of '__import__' is not allowed
# ungated: error: import of 'os' is not allowed

def get_initial_state():
    return {"uid": __import__("os").getuid()}
