"""States are read-only also against the library functions and unbound methods that change a list from C,
past a read-only list's own refusals: heapq's views refuse a state's list, and the gate refuses
``list.append(x, v)``-style calls. (Found by review: both changed a state silently.)"""

from __future__ import annotations

import pytest

from cwm import checks, value_rules
from cwm.games import trajectories
from cwm.sandbox import load_source
from cwm.types import ModelLoadError

REFERENCE = "tests/data/reference/tic_tac_toe_model.py"


@pytest.mark.parametrize("fn", ["heapq.heappush(state['l'], 0)", "heappop(state['l'])", "heapq.heapify(state['l'])",
                                "heapq.heapreplace(state['l'], 0)", "heapq.heappushpop(state['l'], 0)"])
def test_heapq_refuses_to_change_a_state_in_place(fn):
    module = load_source(f"import heapq\nfrom heapq import heappop\n\ndef f(state):\n    {fn}\n", api=())
    state = value_rules.state({"l": [3, 1, 2]})
    with pytest.raises(value_rules.StateMutationError, match="read-only list of the state"):
        module.f(state)
    assert state == {"l": [3, 1, 2]}
    copy = load_source("import heapq\n\ndef g(state):\n    q = list(state['l'])\n    heapq.heappush(q, 0)\n"
                             "    return q\n", api=())
    assert sorted(copy.g(state)) == [0, 1, 2, 3] and copy.g(state)[0] == 0  # on a copy it works as ever


def test_a_model_that_pushes_onto_its_state_is_a_breach_in_the_checks():
    from pathlib import Path

    source = (Path(__file__).resolve().parents[2] / REFERENCE).read_text()
    source = "import heapq\n" + source.replace(
        '    board = list(state["board"])\n', '    board = list(state["board"])\n    heapq.heapify(state["board"])\n')
    report = checks.run_checks(load_source(source), [trajectories.record("tic_tac_toe", seed=0)])
    assert report.breaches > 0 and not report.all_passed
    assert any("tried to modify its input state" in f.render() for f in report.failures)


@pytest.mark.parametrize("call", ["list.append(s['l'], 1)", "dict.update(s, a=1)", "list.sort(s['l'])",
                                  "f = dict.setdefault"])
def test_the_gate_refuses_unbound_mutators_of_builtin_containers(call):
    with pytest.raises(ModelLoadError, match=r"\[gate: builtin-mutator\]"):
        load_source(f"def f(s):\n    {call}\n", api=())


def test_a_numpy_int_is_a_player_as_the_rules_say():
    import numpy as np

    assert value_rules.player(np.int64(1), 2) == 1 and type(value_rules.player(np.int64(1), 2)) is int
    with pytest.raises(value_rules.ValueBreach, match="a bool is not an int"):
        value_rules.player(np.bool_(True), 2)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("where", ["top", "nested", "deep"])
def test_a_list_of_numbers_with_a_non_finite_float_is_refused_where_it_sits(bad, where):
    items = [0.5, 1, "a", None, bad]
    value = {"top": {"r": items}, "nested": {"rows": [[0.0], items]}, "deep": {"a": {"b": items}}}[where]
    with pytest.raises(value_rules.ValueBreach, match="only finite numbers"):
        value_rules.state(value)


def test_a_list_of_finite_numbers_is_read_only_and_keeps_its_items():
    items = [0.5, -1.0, 3, "a", None, True]
    state = value_rules.state({"r": items, "rows": [[0.25, 2.0], items]})
    assert type(state["r"]) is value_rules.ReadOnlyList and state["r"] == items
    assert all(a is b for a, b in zip(state["r"], items))  # nothing converted
    with pytest.raises(value_rules.StateMutationError):
        state["rows"][0].append(1.0)
