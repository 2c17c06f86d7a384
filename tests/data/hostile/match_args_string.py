# hostile: names __match_args__ in a string, the key a class built at run time (make_dataclass's namespace,
# hostile: 3-argument type()) would need to turn a class pattern into a read of a private attribute
# job: call get_initial_state
# expect: static: line 10: the string '__match_args__' names a dunder attribute

import random


def get_initial_state():
    namespace = {"__match_args__": ("_os",)}
    return {"keys": sorted(namespace), "random": repr(random)}
