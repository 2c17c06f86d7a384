# hostile: opening a network connection
# job: call get_initial_state
# expect: static: line 6: import of 'socket' is not allowed
# ungated: load: import of 'socket' is not allowed

import socket


def get_initial_state():
    s = socket.create_connection(("127.0.0.1", 9))
    return {"ok": bool(s)}
