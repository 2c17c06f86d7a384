# hostile: finds the child's verdict writer through sys.modules and reports every check passed for a model
# hostile: that implements nothing (security review r3: forge.py)
# job: check
# expect: static: line 11: access to private attribute '_CURRENT'
# ungated: load: has no attribute 'emit'

import random

report = {"by_type": {"transition": {"passed": 500, "total": 500}}, "transitions_passed": 100,
          "transitions_total": 100, "failures": [], "error": ""}
child = random.Random.seed.__globals__["_os"].sys.modules["cwm.sandbox.child"]._CURRENT[0]
child.emit("ok", report, "")
while True:
    pass
