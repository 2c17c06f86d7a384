# sleeper: a bundle's value function (value.py beside a correct model) that spins forever from its first
# sleeper: call: export and load check that it loads and defines get_value, but no check calls it; the
# sleeper: worker's search calls it at every leaf
# trigger: the first call of get_value (only planning makes one)
# export: ok
# load: ok
# arena: timeout: more than its budget of


def get_value(state, player_id):
    while True:
        pass
