# hostile: make_dataclass with a namespace key built at run time adds a __del__ that spins; an exception in
# hostile: __del__ (the budget interrupt) is reported as unraisable and dropped
# job: call get_initial_state
# expect: static: line 15: access to attribute 'make_dataclass' is not allowed
# ungated: load: module 'dataclasses' has no attribute 'make_dataclass'

import dataclasses


def _spin(self):
    while True:
        pass


Finalised = dataclasses.make_dataclass("Finalised", [], namespace={"_" * 2 + "del" + "_" * 2: _spin})


def get_initial_state():
    while True:
        Finalised()
