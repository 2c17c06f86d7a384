# sleeper: a bundle's value function that answers NaN once it has been called 50 times
# trigger: the 51st call of get_value (load's value check makes it in the sandbox and records the failure in
# trigger: value_report; planning makes it in the worker)
# export: ok
# load: ok
# arena: exception: get_value must be finite, got nan

CALLS = [0]


def get_value(state, player_id):
    CALLS[0] += 1
    return float("nan") if CALLS[0] > 50 else 0.0
