# hostile: a match class pattern reads dunder attributes without a dot, to walk object.__subclasses__()
# job: call get_initial_state
# expect: static: line 10: access to dunder attribute '__class__'

import random


def get_initial_state():
    match ():
        case object(__class__=tuple_type):
            pass
    match tuple_type:
        case type(__base__=base):
            pass
    match base:
        case type(__subclasses__=subclasses):
            return {"n": len(subclasses())}
    return {}
