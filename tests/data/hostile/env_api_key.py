# hostile: reading the environment to find an API key
# job: call get_initial_state
# expect: static: line 6: import of 'os' is not allowed
# ungated: load: import of 'os' is not allowed

import os


def get_initial_state():
    return {k: v for k, v in os.environ.items() if "KEY" in k}
