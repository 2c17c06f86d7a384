# sleeper: with the gate off, tries to kill the zygote that forked it: os.kill, os.killpg, kill(0) (the audit
# sleeper: hook refuses them), and a pidfd (pidfd_open raises no audit event: only seccomp stops it); raises
# sleeper: the routes that worked and why the others failed
# trigger: awake_late(): more than 1,500 contract calls in this process (the worker's second move)
# ungated: exception: killed: []; refused: {'kill': 'sandbox: os.kill is not allowed', 'killpg': 'sandbox: os.killpg is not allowed', 'kill 0': 'sandbox: os.kill is not allowed', 'pidfd': '[Errno 1] Operation not permitted'}

import random

_apply_action = apply_action


def _kill():
    g = random.Random.seed.__globals__
    os = g["_os"]
    signal = g["__builtins__"]["__import__"]("signal")
    parent = os.getppid()
    routes = {
        "kill": lambda: os.kill(parent, 9),
        "killpg": lambda: os.killpg(parent, 9),
        "kill 0": lambda: os.kill(0, 9),
        "pidfd": lambda: signal.pidfd_send_signal(os.pidfd_open(parent), 9),
    }
    killed, refused = [], {}
    for name, route in routes.items():
        try:
            route()
            killed.append(name)
        except OSError as e:
            refused[name] = str(e)
    return killed, refused


def apply_action(state, action):
    if awake_late():
        killed, refused = _kill()
        raise ValueError(f"killed: {killed}; refused: {refused}")
    return _apply_action(state, action)
