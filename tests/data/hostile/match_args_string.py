# hostile: make_dataclass with a namespace that sets __match_args__ from a string, to read a private
# hostile: attribute through a class pattern with keyword-free syntax elsewhere
# job: call get_initial_state
# expect: static: line 11: the string '__match_args__' names a dunder attribute

import dataclasses
import random


def get_initial_state():
    probe = dataclasses.make_dataclass("Probe", [("x", int)], namespace={"__match_args__": ("_os",)})
    return {"probe": repr(probe), "random": repr(random)}
