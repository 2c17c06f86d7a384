# hostile: a generator's frame to reach the caller's globals
# job: call get_initial_state
# expect: static: line 7: access to attribute 'gi_frame' is not allowed

def get_initial_state():
    gen = (x for x in [1])
    frame = gen.gi_frame
    return {"n": len(frame.f_globals)}
