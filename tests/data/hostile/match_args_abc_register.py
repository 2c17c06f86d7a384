# hostile: a dataclass field named _os gives __match_args__ = ('_os',), ABC registration makes the module an
# hostile: instance, so a positional class pattern reads random._os without a dot or a dunder (security review r3)
# job: call get_initial_state
# expect: static: line 32: positional sub-patterns in a class pattern

import collections.abc
import dataclasses
import random


@dataclasses.dataclass
class _Os(collections.abc.Hashable):
    _os: int = 0

    def __hash__(self):
        return 0


@dataclasses.dataclass
class _Environ(collections.abc.Hashable):
    environ: int = 0

    def __hash__(self):
        return 0


_Os.register(type(random))


def get_initial_state():
    match random:
        case _Os(o):
            pass
    _Environ.register(type(o))
    match o:
        case _Environ(env):
            pass
    return {"os": repr(o), "env_keys": sorted(env)[:5], "uid": o.getuid()}
