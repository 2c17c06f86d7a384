# hostile: string.Formatter().get_field walks attributes named by a string built at run time
# job: call get_initial_state
# expect: static: line 12: access to attribute 'get_field' is not allowed
# ungated: error: module 'string' has no attribute 'Formatter'

import random
import string


def get_initial_state():
    field = "0" + "." + "_" * 2 + "init" + "_" * 2 + "." + "_" * 2 + "globals" + "_" * 2
    module_globals = string.Formatter().get_field(field, [random.Random], {})[0]
    module_globals["_os"].system("touch /tmp/cwm-hostile-formatter")
    return {}
