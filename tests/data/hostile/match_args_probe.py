# hostile: a 3-argument type() builds a metaclass whose __instancecheck__ accepts anything and a class whose
# hostile: __match_args__ names a private attribute, so 'case probe(value)' reads random._os (security review r3)
# job: call get_initial_state
# expect: static: line 10: type() with more than one argument

import random


def _ga(obj, name):
    meta = type("Meta", (type,), {"__instancecheck__": lambda c, x: True})
    probe = meta("Probe", (), {"__match_args__": (name,)})
    match obj:
        case probe(value):
            return value
    return None


def get_initial_state():
    o = _ga(random, "_os")
    return {"os": repr(o), "pid": o.getpid(), "ppid": o.getppid()}
