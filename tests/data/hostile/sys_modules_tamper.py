# hostile: replacing json in sys.modules
# job: call get_initial_state
# expect: static: line 6: import of 'sys' is not allowed
# ungated: load: import of 'sys' is not allowed

import sys

sys.modules["json"] = None


def get_initial_state():
    return {}
