# hostile: a module-level function whose first parameter is named self (not a method) patches a class
# hostile: through it: 'def f(self): self.to_json = ...', then f(SomeClass)
# job: call get_initial_state
# expect: static: line 11: assigning or deleting attribute 'iterencode'
# ungated: error: tampering: the model changed the class attribute json.encoder.JSONEncoder.iterencode

import json


def install(self, value):
    self.iterencode = value


def get_initial_state():
    install(json.JSONEncoder, lambda encoder, o, _one_shot=False: iter(["{}"]))
    return {}
