"""Hostile values at the contract's boundary: whatever a model returns, the checks score it and ModelState
refuses or accepts it alike, as a contract breach, never a crash; and no method of a returned value (a
subclass's ``__len__``, ``keys``, ``__class__``) runs in library code.

Every model is the known-good tic-tac-toe (or Leduc) with one patch; helper classes are appended to it.
"""

from __future__ import annotations

import pytest

from cwm import checks, value_rules
from cwm.types import ModelContractError

_NEXT = 'return {"board": board, "player": 1 - state["player"]}'
_OBS = 'return [obs, dict(obs, board=list(obs["board"]))]'
_X_WINS = 'if winner == "x":\n        return [1.0, -1.0]'

# name -> (old, new, helper source appended to the model)
HUGE = {
    "reward": (_X_WINS, 'if winner == "x":\n        return [10 ** 400, -1.0]', ""),
    "player": ('    return state["player"]\n', '    return state["player"] + 10 ** 5000\n', ""),
    "legal_action": ('return [f"{symbol}', 'return [10 ** 5000] + [f"{symbol}', ""),
    "state_key": (_NEXT, 'return {"board": board, "player": 1 - state["player"], 10 ** 5000: 0}', ""),
    "observation": (_OBS, 'return [dict(obs, big=10 ** 5000 * ("x" in state["board"])), obs]', ""),
    "float_state_key": (_NEXT, 'return {"board": board, "player": 1 - state["player"], float("nan"): 0}', ""),
}

RAISES_IF_CALLED = '''

class Called(Exception):
    pass
'''

# name -> (old, new, helpers): values whose own methods must never run; each converts to a valid answer
SUBCLASSES = {
    "observations_list_len": (_OBS, "return Obs([obs, dict(obs, board=list(obs['board']))])", RAISES_IF_CALLED + '''
class Obs(list):
    def __len__(self):
        raise Called("len")

    def __bool__(self):
        raise Called("bool")

    def __iter__(self):
        raise Called("iter")
'''),
    "state_dict_keys": (_NEXT, 'return State({"board": board, "player": 1 - state["player"]})', RAISES_IF_CALLED + '''
class State(dict):
    def __iter__(self):
        raise Called("iter")

    def keys(self):
        raise Called("keys")

    def items(self):
        raise Called("items")
'''),
    "legal_str_hash": ('return [f"{symbol}({i // 3},{i % 3})" for i',
                       'return [Action(f"{symbol}({i // 3},{i % 3})") for i', RAISES_IF_CALLED + '''
class Action(str):
    def __hash__(self):
        raise Called("hash")

    def __eq__(self, other):
        raise Called("eq")
'''),
}


def _patched_ttt(patched_model, old, new, extra, *, gate=True):
    return patched_model("tic_tac_toe", old, new, extra=extra, gate=gate)


@pytest.mark.parametrize("name", sorted(HUGE))
def test_huge_ints_and_non_finite_keys_are_breaches_not_crashes(name, patched_model, recorded):
    wm = _patched_ttt(patched_model, *HUGE[name])
    report = checks.run_checks(wm, recorded("tic_tac_toe"))
    assert report.breaches > 0 and not report.all_passed, report.summary()
    assert all(len(f.render()) < 5000 for f in report.failures)  # shown by a safe rendering, never in full
    play = checks.random_play_checks(wm, num_games=20, seed=0)
    assert play.breaches > 0 and play.failures[0].diff.startswith("ModelContractError")


@pytest.mark.parametrize("name", sorted(SUBCLASSES))
def test_methods_of_returned_subclasses_never_run_in_library_code(name, patched_model, recorded):
    wm = _patched_ttt(patched_model, *SUBCLASSES[name])
    report = checks.run_checks(wm, recorded("tic_tac_toe"))
    assert report.all_passed, report.summary() + "\n" + report.failures[0].render()
    assert checks.random_play_checks(wm, num_games=10, seed=0).all_passed
    state = wm.new_initial_state()
    assert wm.num_players == 2 and len(state.legal_actions()) == 9


def test_a_value_that_lies_about_its_class_is_a_breach_not_a_crash(patched_model, recorded):
    """``isinstance`` believes a ``__class__`` property (the static gate forbids defining one; a model loaded
    without the gate can): the value is refused by its real type."""
    helpers = "\n\nclass Liar:\n    @property\n    def __class__(self):\n        raise RuntimeError('read __class__')\n"
    wm = _patched_ttt(patched_model, _X_WINS, 'if winner == "x":\n        return [Liar(), -1.0]', helpers, gate=False)
    report = checks.run_checks(wm, recorded("tic_tac_toe"))
    assert report.breaches > 0
    assert "must be a number, got an object of type 'Liar'" in [f for f in report.failures if f.breach][0].diff
    assert checks.random_play_checks(wm, num_games=20, seed=0).breaches > 0


def test_numpy_scalars_become_python_numbers(patched_model, recorded):
    wm = patched_model("leduc_poker", 'obs["ante"] = list(state["ante"])',
                       'obs["ante"] = [np.int64(a) for a in state["ante"]]', extra="\nimport numpy as np\n")
    report = checks.run_checks(wm, recorded("leduc_poker"))
    assert report.all_passed, report.summary()
    state = wm.new_initial_state()
    assert [type(x) for x in state.observation(0)["ante"]] == [int, int]


@pytest.mark.parametrize("value,fragment", [
    (10 ** 5000, "an int of 16610 bits"),
    ([1, [2, 10 ** 5000]], "an int of 16610 bits"),
    ({float("inf"): 1}, "a dict key is the float inf"),
    ({10 ** 5000: 1}, "too long to write as JSON"),
], ids=["int", "nested-int", "inf-key", "int-key"])
def test_canonical_refuses_what_json_cannot_write(value, fragment):
    with pytest.raises(value_rules.ValueBreach, match=fragment):
        value_rules.canonical(value)
    assert value_rules.describe(value).startswith("<")


def test_an_observation_json_cannot_write_is_a_breach_before_any_key_is_built(patched_model):
    wm = _patched_ttt(patched_model, *HUGE["observation"])
    state = wm.new_initial_state().child_from_string("x(1,1)")
    with pytest.raises(ModelContractError, match="step 1: the observation of player 0: an observation holds an int"):
        state.information_state_string(0)


@pytest.mark.parametrize("as_float", [1.0, -0.0, 1e16, 2.0**60, -1e300], ids=["1", "-0", "1e16", "2^60", "-1e300"])
def test_an_integral_float_is_the_int_it_equals_in_the_checks_and_in_the_keys(as_float):
    """1 == 1.0 by the contract's rule, at any size: the checks' comparison and the information-state key
    (what ISMCTS matches draws by) must say the same, or a model that passes the checks rejects every draw."""
    as_int = int(as_float)
    got, bools = value_rules.canonical_flagged([{"chips": as_float}])
    assert value_rules.same(got, [{"chips": as_int}], got_bools=bools, expected_bools=False)
    assert got == [{"chips": as_int}] and type(got[0]["chips"]) is int
    assert value_rules.dumps(got) == value_rules.dumps(value_rules.canonical([{"chips": as_int}]))
    start = value_rules.InfoKey.START
    assert value_rules.InfoKey.observe(start, got) == value_rules.InfoKey.observe(start, value_rules.canonical([{"chips": as_int}]))


def test_a_read_only_container_made_by_a_model_is_refused(patched_model, recorded):
    """``state`` trusts a read-only container as checked, so a model must not make one of its own (with
    ``type(state)(...)``) to smuggle a set or a NaN past the checks and into play."""
    wm = patched_model("tic_tac_toe", _NEXT,
                       'return type(state)({"board": board, "player": 1 - state["player"], "seen": {1, 2}})')
    report = checks.run_checks(wm, recorded("tic_tac_toe"))
    assert report.breaches > 0 and "is made by the library only" in report.failures[0].traceback
    with pytest.raises(ModelContractError, match="step 0: apply_action.* raised TypeError: a ReadOnlyDict is made"):
        wm.new_initial_state().child_from_string("x(1,1)")
