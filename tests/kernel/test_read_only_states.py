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


# -- unbound list/dict methods, however a model reaches them (found by review: each changed a shared state) ---

ROWS = {"rows": [[1.0, 2.0], [3.0]], "n": {"k": "v"}, "a": 1}
BYPASSES = {  # what the model runs on its state s, and the path of the container it tries to change
    "type-of-list": ("L = type([])\n    L.append(s['rows'][0], float('nan'))", ("rows", 0)),
    "alias-of-list": ("L = list\n    L.extend(s['rows'][0], [float('nan')])", ("rows", 0)),
    "partial": ("functools.partial(type([]).append, s['rows'][0])(object())", ("rows", 0)),
    "from-a-list": ("m = [type([]).insert]\n    m[0](s['rows'][1], 0, 9.0)", ("rows", 1)),
    "map": ("list(map(type([]).append, [s['rows'][0]], [4.0]))", ("rows", 0)),
    "super": ("super(type(s['rows'][0]), s['rows'][0]).append(5.0)", ("rows", 0)),
    "subclass": ("class X(type([])):\n        pass\n    X.extend(s['rows'][0], [7.0])", ("rows", 0)),
    "generic-alias": ("list[float].append(s['rows'][1], 6.0)", ("rows", 1)),
    "dict-update": ("D = type({})\n    D.update(s, a=object())", ()),
    "dict-setdefault": ("D = dict\n    D.setdefault(s['n'], 'x', float('inf'))", ("n",)),
    "dict-popitem": ("type({}).popitem(s['n'])", ("n",)),
    "defaultdict": ("collections.defaultdict.update(s['n'], k=2)", ("n",)),
}


def _bypass(name: str) -> tuple[dict, object]:
    """The state after the model ran bypass ``name`` on it, and the container it tried to change."""
    code, path = BYPASSES[name]
    module = load_source(f"import collections\nimport functools\n\ndef f(s):\n    {code}\n", api=())
    state = value_rules.state(ROWS)
    module.f(state)
    target = state
    for key in path:
        target = target[key]
    return state, target


@pytest.mark.parametrize("name", sorted(BYPASSES))
def test_an_unbound_mutator_reached_any_way_changes_nothing_of_the_state(name):
    import copy

    state, _ = _bypass(name)
    assert copy.deepcopy(state) == ROWS and state == ROWS  # what the library and a model's copy read
    assert state["rows"][0][0] == 1.0 and len(state["rows"][0]) == 2 and state["n"].get("x") is None


@pytest.mark.parametrize("name", sorted(BYPASSES))
def test_a_container_a_model_tried_to_change_so_is_refused_when_read_or_handed_back(name):
    _, target = _bypass(name)
    with pytest.raises(value_rules.StateMutationError, match="unbound .* method .* changes nothing"):
        list(target)  # iterating it names what the model tried
    assert list(target) == list(value_rules.thaw(target))  # refused once: it reads as before from then on
    _, target = _bypass(name)
    with pytest.raises(value_rules.ValueBreach, match="tried to change through an unbound method"):
        value_rules.state({"kept": target})  # a returned state that keeps it is refused
    assert value_rules.state({"kept": target})["kept"] is target


def test_a_model_that_appends_to_its_board_unbound_is_a_breach_and_its_parent_is_unchanged():
    from pathlib import Path

    from cwm import model
    from cwm.games import action_codec, resolve
    from cwm.types import ModelContractError

    source = (Path(__file__).resolve().parents[2] / REFERENCE).read_text()
    source = source.replace('    board = list(state["board"])\n',
                            '    type([]).append(state["board"], float("nan"))\n    board = list(state["board"])\n')
    assert "float(\"nan\")" in source
    wm = model.WorldModel(load_source(source), codec=action_codec(resolve("tic_tac_toe")), name="ttt")
    root = wm.new_initial_state()
    with pytest.raises(ModelContractError, match="tried to modify its input state"):
        root.child(root.legal_actions()[0])
    assert root.raw == {"board": ["."] * 9, "player": 0} and len(root.legal_actions()) == 9
    report = checks.run_checks(load_source(source), [trajectories.record("tic_tac_toe", seed=0)])
    assert report.breaches > 0 and any("tried to modify its input state" in f.render() for f in report.failures)


def test_a_read_only_state_reads_as_the_plain_json_it_holds():
    """The decoy storage is never what a reader sees: every way models and the library read a state agrees
    with the plain value."""
    import copy
    import json
    import pickle

    import numpy as np

    from cwm import json_values, text

    plain = {"b": [1, 2.5, "x", None], "n": {"k": [[1], [2]]}, "e": [], "d": {}, "t": True}
    s = value_rules.state(plain)
    r = s["b"]
    assert isinstance(s, dict) and isinstance(r, list) and len(s) == 5 and len(r) == 4 and "x" in r
    assert json.dumps(s) == json.dumps(plain) and json.dumps(s, sort_keys=True, indent=1) == json.dumps(
        plain, sort_keys=True, indent=1)
    assert s == plain and plain == s and (s != plain) is False and r == plain["b"] and plain["b"] == r and r != [1]
    assert r[1:] == [2.5, "x", None] and type(r[1:]) is list and r[-1] is None and r + [0] == plain["b"] + [0]
    assert [0] + r == [0] + plain["b"] and r * 2 == plain["b"] * 2 and list(reversed(r)) == plain["b"][::-1]
    assert r.index("x") == 2 and r.count(1) == 1 and sorted(s["n"]["k"], reverse=True) == [[2], [1]]
    assert s["n"]["k"] < [[2]] and max(s["n"]["k"]) == [2] and not s["e"] and not s["d"]
    assert dict(s) == plain and {**s} == plain and list(s) == list(plain) and s.get("zz", 5) == 5
    assert s | {"q": 1} == plain | {"q": 1} and {"q": 1} | s == {"q": 1} | plain
    assert repr(s) == repr(plain) and f"{r}" == str(plain["b"]) and "{b}".format(**s) == str(plain["b"])
    assert type(copy.copy(s)) is dict and copy.deepcopy(s) == plain and pickle.loads(pickle.dumps(s)) == plain
    assert np.array(s["n"]["k"]).shape == (2, 1) and np.sum(value_rules.state({"a": [1, 2, 3]})["a"]) == 6
    assert text.plain_text(s) == text.plain_text(plain) and text.clean_json(s) == plain
    assert json_values.canonical(s) == json_values.canonical(plain) and json_values.thaw(s) == plain
    assert value_rules.state({"x": s["n"]})["x"] is s["n"]  # a kept row is shared, not copied
    assert value_rules.action_strings(value_rules.state({"l": ["a", "b"]})["l"]) == ["a", "b"]


def test_a_model_call_that_only_tries_an_unbound_dict_method_is_a_breach_at_that_call():
    from pathlib import Path

    from cwm import model
    from cwm.games import action_codec, resolve
    from cwm.types import ModelContractError

    source = (Path(__file__).resolve().parents[2] / REFERENCE).read_text()
    target = "def get_legal_actions(state):\n"
    assert source.count(target) == 1
    source = source.replace(target, target + "    D = type({})\n    D.setdefault(state, 'x', 1)\n")
    wm = model.WorldModel(load_source(source), codec=action_codec(resolve("tic_tac_toe")), name="ttt")
    root = wm.new_initial_state()
    with pytest.raises(ModelContractError, match=r"step 0: get_legal_actions\(...\) tried to modify its input"):
        root.legal_actions()  # the call reads nothing it tried to change: the check after the call names it
    assert root.raw == {"board": ["."] * 9, "player": 0} and "x" not in root.raw


GRAB = ("class Grab:\n"
        "    def __init__(self):\n        self.got = []\n"
        + "".join(f"    def __{op}__(self, other):\n        self.got.append(other)\n        return False\n"
                  for op in ("eq", "ne", "lt", "le", "gt", "ge")) +
        "    def __hash__(self):\n        return 0\n\n\n"
        "class Sly(list):\n"
        "    def __add__(self, other):\n        G.got.append(other)\n        return NotImplemented\n\n\n"
        "G = Grab()\n\n\n")
REFLECTED = {  # how the model hands a container of its state to a method of its own
    "list-eq": "s['rows'][0] == G", "list-ne": "s['rows'][0] != G", "list-lt": "s['rows'][0] < G",
    "list-gt": "s['rows'][0] > G", "list-le": "s['rows'][0] <= G", "list-ge": "s['rows'][0] >= G",
    "list-in-list": "s['rows'][0] == [G, 2.0]", "list-radd": "Sly() + s['rows'][0]",
    "dict-eq": "s['n'] == G", "dict-ne": "s != G", "items-view": "s.items() == G", "keys-view": "s['n'].keys() != G",
    "values-view": "s.values() == G",
}
# The model then changes every list or dict its methods received, and compares each dict view's mapping with
# its Grab again (a mappingproxy compares by handing over the dict it shows).
GRABBED = ("def f(s):\n    G.got.clear()\n    try:\n        _ = {code}\n    except TypeError:\n        pass\n"
           "    seen = 0\n"
           "    while seen < len(G.got) and seen < 20:\n"
           "        got = G.got[seen]\n        seen += 1\n"
           "        if type(got) is list:\n            got.append(float('nan'))\n"
           "        elif type(got) is dict:\n            got['a'] = float('nan')\n"
           "        else:\n"
           "            try:\n                _ = got.mapping == G\n            except AttributeError:\n"
           "                pass\n"
           "    return seen\n")


@pytest.mark.parametrize("name", sorted(REFLECTED))
def test_a_models_reflected_operator_never_receives_what_a_read_only_container_holds(name):
    """A comparison or an addition calls the other operand's (reflected) method with this side's operand: a
    model's ``__eq__``/``__gt__``/``__add__`` must meet a copy, never the items a read-only container keeps, or
    it could change them (review: it could, and a model reversing its board so passed the checks)."""
    module = load_source(GRAB + GRABBED.format(code=REFLECTED[name]), api=())
    state = value_rules.state(ROWS)
    assert module.f(state) >= 1  # the model's method was called
    assert state == ROWS and value_rules.thaw(state) == ROWS and len(state["rows"][0]) == 2
    value_rules.untouched(state)
    assert value_rules.state(state) is state  # nothing non-finite got in


def test_comparisons_and_sums_of_read_only_containers_answer_as_plain_ones():
    state = value_rules.state({"a": [1, 2], "b": [1, 2], "c": [1, 3], "d": {"x": [1]}, "e": {"x": [1]}})
    a, b, c = state["a"], state["b"], state["c"]
    assert a == b and a == [1, 2] and [1, 2] == a and a != c and a < c and c > a and a <= b and c >= a  # noqa: SIM300
    assert a + c == [1, 2, 1, 3] and [0] + a == [0, 1, 2] and a * 2 == [1, 2, 1, 2] and 2 * a == [1, 2, 1, 2]
    assert state["d"] == state["e"] and state["d"] == {"x": [1]} and {"x": [1]} == state["d"]  # noqa: SIM300
    assert state["d"] != {"x": [2]} and not (state["d"] == 3) and a != "ab"  # noqa: SIM201
    assert sorted(state.items())[0] == ("a", [1, 2]) and set(state["d"].keys()) == {"x"}


def test_a_model_that_reverses_its_board_through_a_reflected_eq_changes_no_state():
    from pathlib import Path

    from cwm import model
    from cwm.games import action_codec, resolve

    source = (Path(__file__).resolve().parents[2] / REFERENCE).read_text()
    source = source.replace("def get_initial_state", GRAB + "def get_initial_state", 1)
    hook = '    return {"board": board, "player": 1 - state["player"]}\n'
    assert hook in source
    source = source.replace(hook, "    G.got.clear()\n    _ = state['board'] == G\n"
                                  "    for got in G.got:\n        if type(got) is list:\n            got.reverse()\n"
                                  + hook)
    wm = model.WorldModel(load_source(source), codec=action_codec(resolve("tic_tac_toe")), name="ttt")
    first = wm.new_initial_state().child_from_string("x(0,0)")
    second = first.child_from_string("o(1,1)")  # the model reverses what its Grab received of first's board
    assert first.raw["board"][0] == "x" and second.raw["board"][:2] == ["x", "."]
    report = checks.run_checks(load_source(source), [trajectories.record("tic_tac_toe", seed=s) for s in range(2)])
    assert report.all_passed  # the reversed list was a copy: the model's moves are the reference's


# -- the one-pass freeze of a returned dict (json_values._freeze_dict): its flat rows checked as a whole -----

@pytest.mark.parametrize("row", [[0.0, float("inf")], [float("nan"), 1], [float("inf"), -float("inf")],
                                 [1e308, 1e308, float("inf")], [True, 2**2000, float("nan")]])
def test_a_row_of_exact_numbers_with_a_non_finite_float_is_refused_at_the_top_and_nested(row):
    for value in ({"r": row, "a": 1}, {"rows": [row]}, {"d": {"r": row}}):
        with pytest.raises(value_rules.ValueBreach, match="only finite numbers"):
            value_rules.state(value)


@pytest.mark.parametrize("row", [[1e308, 1e308], [2**2000, 0.5], [-0.0, 0.0, True, 3], [-1e308, 1e308, 5e-324]])
def test_a_row_of_finite_numbers_whose_sum_a_float_cannot_hold_is_kept_as_it_is(row):
    state = value_rules.state({"r": row, "rows": [row]})
    for got in (state["r"], state["rows"][0]):
        assert type(got) is value_rules.ReadOnlyList and all(a is b for a, b in zip(got, row))
        assert len(got) == len(row)


def test_a_returned_row_the_model_changes_afterwards_leaves_the_state_as_it_was():
    board, rewards = ["."] * 9, [0.0, 0.0]
    state = value_rules.state({"board": board, "rewards": rewards, "player": 0})
    board[0], rewards[1] = "x", float("nan")  # the model kept its lists and changes them after the call
    rewards.append(1.0)
    assert state["board"] == ["."] * 9 and state["rewards"] == [0.0, 0.0]


def test_a_row_of_number_subclasses_is_converted_without_calling_their_methods():
    import numpy as np

    called = []

    class F(float):
        def __float__(self):
            called.append("__float__")
            return float("nan")

        def __repr__(self):
            called.append("__repr__")
            return "nan"

    state = value_rules.state({"r": [F(0.25), np.float64(0.5), 1.0]})
    assert [type(x) for x in state["r"]] == [float, float, float] and state["r"] == [0.25, 0.5, 1.0]
    assert called == []


def test_keys_of_a_returned_dict_are_checked_in_the_one_pass():
    class S(str):
        pass

    with pytest.raises(value_rules.ValueBreach, match="two dict keys that JSON writes alike"):
        value_rules.state({"1": [0.0], 1: [1.0]})
    with pytest.raises(value_rules.ValueBreach, match="dict key of type"):
        value_rules.state({"a": 1, (1, 2): [0.0]})
    with pytest.raises(value_rules.ValueBreach, match="dict key of type S"):  # its methods could lie
        value_rules.state({S("a"): [0.5], "b": 1})
    assert value_rules.state({1: [0.5], None: "x", "b": True}) == {1: [0.5], None: "x", "b": True}


def test_a_kept_row_a_model_changed_unbound_is_refused_when_handed_back_in_a_new_dict():
    given = value_rules.state({"board": ["."] * 9, "rewards": [0.0, 0.0]})
    list.append(given["rewards"], float("nan"))  # what a model's unbound append does: only the decoy changes
    with pytest.raises(value_rules.ValueBreach, match="tried to change through an unbound method"):
        value_rules.state({"board": given["board"], "rewards": given["rewards"], "player": 1})
    assert given["rewards"] == [0.0, 0.0] and list(given["rewards"]) == [0.0, 0.0]  # put back, read as before


@pytest.mark.parametrize("walk", ["iter(s['rows'][0])", "reversed(s['rows'])", "enumerate(s['rows'][1])",
                                  "iter(s['n'])", "iter(s.values())", "reversed(s)"])
def test_an_iterator_over_a_read_only_container_hands_copy_deepcopy_nothing_to_change(walk):
    """``copy.deepcopy`` keeps every object it copied in the memo its caller passes (``memo[id(memo)]``), and
    a list's iterator is copied by way of the list it walks: iterating a read-only list must not walk its
    private items (review: a model so emptied or extended a shared row unseen)."""
    module = load_source("import copy\n\n\ndef f(s):\n    memo = {}\n    copy.deepcopy(" + walk + ", memo)\n"
                         "    changed = 0\n"
                         "    for kept in memo.values():\n"
                         "        for o in (kept if type(kept) is list else [kept]):\n"
                         "            if type(o) is list:\n                o.append(float('nan'))\n"
                         "                changed += 1\n"
                         "            elif type(o) is dict:\n                o['a'] = float('nan')\n"
                         "                changed += 1\n"
                         "    return changed\n", api=())
    state = value_rules.state(ROWS)
    module.f(state)
    assert state == ROWS and value_rules.thaw(state) == ROWS and [len(r) for r in state["rows"]] == [2, 1]
    value_rules.untouched(state)
    assert value_rules.state({"kept": state["rows"]})["kept"] is state["rows"]


@pytest.mark.parametrize("state", [
    {"x": 3, "o": 5, "p": 0, "w": None, "name": "x"},
    {"board": [".", "x"], "rewards": [0.0, -1.0], "deep": {"a": [[1, 2], {"b": True}]}},
    {},
])
def test_the_exact_dict_path_freezes_as_state_does(state):
    # ModelState's hot path calls exact_dict_state for an exact dict: the same read-only copy as state()
    from cwm.json_values import exact_dict_state

    got, want = exact_dict_state(state), value_rules.state(state)
    assert type(got) is value_rules.ReadOnlyDict and got == want == state
    assert value_rules.thaw(got) == value_rules.thaw(want) == state
    with pytest.raises(value_rules.StateMutationError):
        got["x"] = 1  # type: ignore[index]


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {1: 2, "1": 3}, {"x": [1, float("inf")]}, {"x": object()}])
def test_the_exact_dict_path_refuses_what_state_refuses_with_the_same_words(bad):
    from cwm.json_values import exact_dict_state

    with pytest.raises(value_rules.ValueBreach) as fast:
        exact_dict_state(bad)
    with pytest.raises(value_rules.ValueBreach) as general:
        value_rules.state(bad)
    assert str(fast.value) == str(general.value)
