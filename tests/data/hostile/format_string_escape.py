# hostile: str.format walking attributes to reach the function's globals
# job: call get_initial_state
# expect: static: line 6: a format template that reaches the dunder attribute '__globals__'

def get_initial_state():
    return {"leak": "{0.__globals__}".format(get_initial_state)}
