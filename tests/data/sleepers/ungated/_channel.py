# The session's answer channel, for the ungated sleepers that write their own answers (appended to every
# ungated sleeper by tests/security/programs.py): with the gate off, the frames lead up to the session loop,
# whose answer writer keeps the pipe and the answer's secret in its closure.

import random as _random


def answer_channel():
    os = _random.Random.seed.__globals__["_os"]
    frame = os.sys._getframe()
    while frame is not None and frame.f_code.co_name != "session_main":
        frame = frame.f_back
    emit = frame.f_locals["emit"]
    cells = dict(zip(emit.__code__.co_freevars, (c.cell_contents for c in emit.__closure__)))
    return os, cells["fd"], cells["secret"]


WRITTEN = [False]


def write_answer_once(data):
    """Writes ``data`` as this move's answer (the first time it is called; later calls do nothing)."""
    if not WRITTEN[0]:
        WRITTEN[0] = True
        os, fd, secret = answer_channel()
        os.write(fd, secret + len(data).to_bytes(8, "big") + data)
