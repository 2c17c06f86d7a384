# hostile: codecs.open (re-exported by json) to read a file without the open builtin
# job: call get_initial_state
# expect: static: line 10: access to attribute 'codecs' is not allowed
# ungated: error: module 'json' has no attribute 'codecs'

import json


def get_initial_state():
    return {"passwd": json.codecs.open("/etc/passwd").read()}
