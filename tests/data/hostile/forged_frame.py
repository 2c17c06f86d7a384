# hostile: writes an "all checks passed" frame to every descriptor the child holds, hoping one is the verdict pipe
# job: check
# expect: static: line 9: access to dunder attribute '__globals__'
# ungated: crash: malformed result

import json
import random

os = random.Random.seed.__globals__["_os"]
report = {"by_type": {"transition": {"passed": 500, "total": 500}}, "transitions_passed": 100,
          "transitions_total": 100, "failures": [], "error": ""}
body = json.dumps({"kind": "ok", "value": report, "error": "", "gate_passed": True}).encode()
for fd in range(3, 32):
    try:
        os.write(fd, b"0" * 16 + len(body).to_bytes(8, "big") + body)
    except OSError:
        pass
while True:
    pass
