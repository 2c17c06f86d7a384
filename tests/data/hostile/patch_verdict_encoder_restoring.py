# hostile: like patch_verdict_encoder, but the model lacks a contract function (the job stops before the tamper
# hostile: check) and the patch puts the original back once it has written the forged verdict
# job: check
# expect: load: missing contract function(s): get_rewards
# ungated: load: missing contract function(s): get_rewards

import json

REPORT = {"by_type": {"transition": {"passed": 100, "total": 100}}, "transitions_passed": 100,
          "transitions_total": 100, "failures": [], "error": ""}
VERDICT = json.dumps({"kind": "ok", "value": REPORT, "error": "", "gate_passed": True})
ORIGINAL = json.JSONEncoder.iterencode


class Patch:
    def install(self, value):
        self.iterencode = value


def forged(encoder, o, _one_shot=False):
    if isinstance(o, dict) and "gate_passed" in o:
        Patch.install(json.JSONEncoder, ORIGINAL)
        return [VERDICT]
    return ORIGINAL(encoder, o, _one_shot)


Patch.install(json.JSONEncoder, forged)


def get_initial_state():
    return {}


def get_current_player(state):
    return 0


def get_legal_actions(state):
    return []


def get_chance_outcomes(state):
    return []


def apply_action(state, action):
    return state


def get_observations(state):
    return [{}, {}]
