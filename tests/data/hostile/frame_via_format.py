# hostile: a format template built at run time reaches sys._getframe
# job: call get_initial_state
# expect: static: line 10: 'format' is allowed only on a string literal
# ungated: error: module 'collections' has no attribute '_sys'

import collections


def get_initial_state():
    return {"frame": ("{0." + "_sys._getframe}").format(collections)}
