# hostile: a lambda whose parameter is named cls reaches sys.modules through collections._sys and swaps a
# hostile: module the harness relies on
# job: call get_initial_state
# expect: static: line 11: access to private attribute '_sys'
# ungated: error: module 'collections' has no attribute '_sys'

import collections


def get_initial_state():
    (lambda cls: cls._sys)(collections).modules["json"] = None
    return {}
