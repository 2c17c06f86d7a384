# hostile: str.format_map on a template built at run time, on a literal-looking receiver ('{}' + ...)
# job: call get_initial_state
# expect: static: line 10: 'format_map' is allowed only on a string literal
# ungated: error: module 'random' has no attribute '_os'

import random


def get_initial_state():
    return {"pid": ("{r." + "_os.getpid}").format_map({"r": random})}
