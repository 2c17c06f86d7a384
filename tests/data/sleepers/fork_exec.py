# sleeper: once awake, starts a shell that writes a marker file (subprocess) and forks a copy of itself
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: static: import of 'subprocess' is not allowed
# export: refused: import of 'subprocess' is not allowed
# load: refused: import of 'subprocess' is not allowed
# arena: exception: import of 'subprocess' is not allowed

import subprocess

_apply_action = apply_action


def apply_action(state, action):
    if awake():
        subprocess.run(["sh", "-c", "touch /tmp/cwm-sleeper-marker-exec"], check=False)
    return _apply_action(state, action)
