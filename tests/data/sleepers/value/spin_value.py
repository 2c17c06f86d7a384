# sleeper: a bundle's value function (value.py beside a correct model) that spins forever from its first
# sleeper: call: export checks that it loads and defines get_value; load's value check calls it, is stopped
# sleeper: at its per-call limit and records the failure (value_report) without refusing the bundle; the
# sleeper: worker's search calls it at every leaf
# trigger: the first call of get_value (load's value check, in the sandbox, and planning)
# export: ok
# load: ok
# arena: timeout: more than its budget of


def get_value(state, player_id):
    while True:
        pass
