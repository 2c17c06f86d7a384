"""The JAX twin child's playout records are data from untrusted code: every malformed field is refused with a
one-line reason naming the playout, the state and the field, never a TypeError later in the comparison."""

from __future__ import annotations

import copy

import pytest

from cwm.sandbox import jax_equivalence
from cwm.sandbox.verdicts import JobResult

STATE = {"player": 0, "legal": "x(0,0) x(0,1)", "chance": None, "rewards": [0.0, 0.0], "decoded": {"b": [1]},
         "tensors": [[0.0, 1.0], [1.0, 0.0]]}
CHANCE = dict(STATE, player=-1, legal=None, chance=[["deal 1", 0.5], ["deal 2", 0.5]])
PLAYOUT = {"actions": ["x(0,0)"], "states": [STATE, CHANCE], "error": None}


def _parsed(playout: object) -> list | str:
    return jax_equivalence._twin_parsed(JobResult(ok=True, value=[playout], error="", kind="ok"), 1)


def _forged(path: tuple, value: object) -> dict:
    record = copy.deepcopy(PLAYOUT)
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return record


FORGED = {
    "reward-str": (("states", 0, "rewards"), ["1", 0.0], "state 0: its rewards are not a list of numbers"),
    "reward-bool": (("states", 0, "rewards"), [True, 0.0], "state 0: its rewards are not a list of numbers"),
    "reward-none": (("states", 0, "rewards"), None, "state 0: its rewards are not a list of numbers"),
    "chance-int": (("states", 1, "chance"), [3], "state 1: its chance distribution"),
    "chance-prob-str": (("states", 1, "chance"), [["deal 1", "0.5"]], "state 1: its chance distribution"),
    "chance-triple": (("states", 1, "chance"), [["deal 1", 0.5, 1]], "state 1: its chance distribution"),
    "chance-dict": (("states", 1, "chance"), {"deal 1": 1.0}, "state 1: its chance distribution"),
    "legal-list": (("states", 0, "legal"), ["x(0,0)"], "state 0: its legal set"),
    "player-str": (("states", 0, "player"), "0", "state 0: its player is not an int"),
    "player-bool": (("states", 0, "player"), True, "state 0: its player is not an int"),
    "tensor-str": (("states", 0, "tensors"), [["a"]], "state 0: its tensors"),
    "state-extra-key": (("states", 0, "extra"), 1, "state 0: not a record of"),
    "state-not-dict": (("states", 0), [1, 2], "state 0: not a record of"),
    "actions-int": (("actions",), [1], "its actions are not a list of str"),
    "error-int": (("error",), 3, "its error is neither None nor a str"),
    "states-dict": (("states",), {}, "its states are not a list"),
}


@pytest.mark.parametrize("name", sorted(FORGED))
def test_a_forged_twin_record_is_refused_with_its_field(name: str) -> None:
    path, value, reason = FORGED[name]
    got = _parsed(_forged(path, value))
    assert isinstance(got, str) and got.startswith("error: the record of playout 1 is malformed: ")
    assert reason in got and "\n" not in got


def test_a_well_formed_twin_record_is_kept_and_compared() -> None:
    got = _parsed(copy.deepcopy(PLAYOUT))
    assert got == [PLAYOUT]
    reference = {"actions": ["x(0,0)"], "error": None,
                 "states": [{k: v for k, v in s.items() if k not in ("decoded", "tensors")} | {"observations": []}
                            for s in (STATE, CHANCE)]}
    decoded = {"actions": [], "error": None, "states": [{"player": 0, "legal": STATE["legal"], "observations": []},
                                                        {"player": -1, "legal": None, "observations": []}]}
    assert jax_equivalence.compare_jax([reference], got, [decoded]) == [None]
    forged = _forged(("states", 0, "rewards"), [1.0, 0.0])  # a well-formed record that differs is a divergence
    assert jax_equivalence.compare_jax([reference], [forged], [decoded])[0].field == "rewards"
