# hostile: functools.singledispatch().register evaluates a string annotation, which may name dunders
# job: call get_initial_state
# expect: static: line 14: access to attribute 'singledispatch'
# ungated: load: module 'functools' has no attribute 'singledispatch'

import functools
import random


def base(x):
    return x


dispatch = functools.singledispatch(base)


def payload(x: "random.Random.seed.__globals__['_os'].system('touch /tmp/cwm-hostile-dispatch')"):
    return x


def get_initial_state():
    dispatch.register(payload)
    return {}
