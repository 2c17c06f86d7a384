# hostile: returning an object that is not JSON
# job: call get_initial_state
# expect: error: not JSON-serialisable

def get_initial_state():
    return {"cells": {1, 2, 3}}
