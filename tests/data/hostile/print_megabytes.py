# hostile: printing megabytes of output (it is discarded; the answer still counts)
# job: call get_initial_state
# expect: ok: {"board": "ok"}

def get_initial_state():
    for _ in range(200):
        print("spam " * 20000)
    return {"board": "ok"}
