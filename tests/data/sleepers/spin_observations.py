# sleeper: get_observations spins forever when it is asked right after get_initial_state, as the library's
# sleeper: model wrapper asks (to count the players) and the trajectory checks never do
# trigger: PREVIOUS[0] == "get_initial_state" (random play at load, a planning worker's start)
# check: passes
# export: ok
# load: refused: timeout: get_observations(...) ran longer than the per-call budget
# arena: exception: model failed random play at load: timeout

_get_observations = get_observations


def get_observations(state):
    while PREVIOUS[0] == "get_initial_state":
        pass
    return _get_observations(state)
