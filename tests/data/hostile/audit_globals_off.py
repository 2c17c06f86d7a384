# hostile: switches the audit hook off by editing the layer module's globals, then reads /etc/passwd
# hostile: (security review r3: read_passwd.py)
# job: call get_initial_state
# expect: static: line 11: access to dunder attribute '__globals__'
# ungated: error: opening '/etc/passwd' is not allowed

import random


def get_initial_state():
    os = random.Random.seed.__globals__["_os"]
    layers = os.sys.modules["cwm.sandbox.layers"]
    layers._READ_PREFIXES = ("/",)
    layers._BLOCKED_EVENTS = frozenset()
    layers._BLOCKED_PREFIXES = ()
    fd = os.open("/etc/passwd", 0)
    return {"passwd": os.read(fd, 200).decode()}
