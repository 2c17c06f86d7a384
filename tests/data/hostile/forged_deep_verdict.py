# hostile: with the gate off, takes the verdict writer's secret and pipe from the job runner's closure (_one_job) and writes
# hostile: a verdict nested 100,000 lists deep, so that reading it overflows the zygote's JSON decoder
# job: call get_initial_state
# expect: static: line 11: access to dunder attribute '__globals__'
# ungated: crash: the child wrote a malformed result

import random


def get_initial_state():
    os = random.Random.seed.__globals__["_os"]
    frame = os.sys._getframe()
    while frame is not None and frame.f_code.co_name != "_one_job":
        frame = frame.f_back
    emit = frame.f_locals["emit"]
    cells = dict(zip(emit.__code__.co_freevars, (c.cell_contents for c in emit.__closure__)))
    data = b'{"kind": "ok", "value": ' + b"[" * 100_000 + b"]" * 100_000 + b', "error": ""}'
    os.write(cells["fd"], cells["secret"] + len(data).to_bytes(8, "big") + data)
    while True:
        pass
