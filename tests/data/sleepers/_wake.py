# The wake-up every sleeper shares, appended after the reference model and the sleeper's own code by
# tests/security/programs.py. Each contract function counts its calls in this process: the checks of the
# recorded games make a few hundred calls (240 on five games), random play at load about 140, a planning
# worker's search more than a thousand in its first move. PREVIOUS names the call before this one, so a
# sleeper can also tell the checks' order of calls from the library wrapper's (random play, planning).

TICKS = [0]
PREVIOUS = [""]
CURRENT = [""]
WAKE_AFTER = 600
WAKE_LATE = 1500
HONEST = {
    "get_initial_state": get_initial_state, "get_current_player": get_current_player,
    "get_legal_actions": get_legal_actions, "get_chance_outcomes": get_chance_outcomes,
    "apply_action": apply_action, "get_observations": get_observations, "get_rewards": get_rewards,
}


def awake():
    return TICKS[0] > WAKE_AFTER


def awake_late():
    return TICKS[0] > WAKE_LATE


def _tick(name):
    TICKS[0] += 1
    PREVIOUS[0], CURRENT[0] = CURRENT[0], name
    return HONEST[name]


def get_initial_state():
    return _tick("get_initial_state")()


def get_current_player(state):
    return _tick("get_current_player")(state)


def get_legal_actions(state):
    return _tick("get_legal_actions")(state)


def get_chance_outcomes(state):
    return _tick("get_chance_outcomes")(state)


def apply_action(state, action):
    return _tick("apply_action")(state, action)


def get_observations(state):
    return _tick("get_observations")(state)


def get_rewards(state):
    return _tick("get_rewards")(state)
