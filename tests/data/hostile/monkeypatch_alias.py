# hostile: monkeypatching json through an alias (with the gate off, it patches only the model's own copy of json)
# job: call get_initial_state
# expect: static: line 9: assigning or deleting attribute 'loads'
# ungated: ok: {}

import json

j = json
j.loads = lambda text: {}


def get_initial_state():
    return {}
