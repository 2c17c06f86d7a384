# hostile: running a program with subprocess
# job: call get_initial_state
# expect: static: line 6: import of 'subprocess' is not allowed
# ungated: load: import of 'subprocess' is not allowed

import subprocess


def get_initial_state():
    return {"out": subprocess.run(["id"], capture_output=True).stdout.decode()}
