"""The equivalence check holds a twin's own playout (cwm.contract.PLAYOUT) to cwm stepping the checked model
exactly (cwm.sandbox.playout_check): the hand-written tic-tac-toe twin with a playout passes, and twins derived
from it by one small textual patch (an extra draw, the legal moves in another order, a dropped reward, a wrong
end state) are refused with a one-line report for the LLM; hostile playouts are contained and refused; the
evidence records the check whenever the loaded twin binds a callable playout (however its source binds it), and
a planning worker uses a twin's playout only when told so from evidence that records a passing check."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm.sandbox import Limits
from cwm.sandbox.equivalence import (
    EquivalenceSettings,
    check_equivalence,
    divergence_failure,
    evidence_problem,
    playout_checked,
)

DATA = Path(__file__).resolve().parents[1] / "data"
MODEL = (DATA / "reference" / "tic_tac_toe_model.py").read_text(encoding="utf-8")
FUSED = (DATA / "twins" / "ttt_fused.py").read_text(encoding="utf-8")
PLAIN = (DATA / "twins" / "ttt_fast.py").read_text(encoding="utf-8")
SETTINGS = EquivalenceSettings(p=0.2, delta=0.05, simulations=20,
                               limits=Limits(wall_s=60.0, cpu_s=60.0, memory_mb=1024, per_call_s=1.0))
DRAW = "        cell = empty.pop(int(rand() * len(empty)))\n"
LAST = "            return [returns[0] + rewards[0], returns[1] + rewards[1]], None\n"
END = '    return returns, {"board": "".join(board), "player": player, "winner": winner, "moves": moves}\n'


@pytest.fixture(scope="module")
def evidence() -> dict:
    return check_equivalence(MODEL, FUSED, settings=SETTINGS)


def test_a_right_playout_passes_and_the_evidence_records_its_check(evidence: dict) -> None:
    assert evidence["verdict"] == "equivalent", evidence["reason"]
    fused = evidence["playout"]
    assert fused["checked"] and fused["verdict"] == "equivalent" and fused["runs"] == 3 * fused["states"] > 200
    assert "agrees exactly in" in evidence["reason"]
    assert evidence_problem(evidence, MODEL, FUSED) is None
    plain = check_equivalence(MODEL, PLAIN, settings=SETTINGS)  # no playout: nothing more is checked or asked
    assert plain["verdict"] == "equivalent" and plain["playout"] is None
    assert evidence_problem(plain, MODEL, PLAIN) is None


@pytest.mark.parametrize("case, old, new, said", [
    ("one extra draw", DRAW, DRAW + "        rand()\n", "the returns differ"),
    ("an extra draw at the end", LAST, "            rand()\n" + LAST, "drew a different number of random numbers"),
    ("the legal moves reversed", 'empty = [i for i in range(9) if board[i] == "."]',
     'empty = [i for i in range(8, -1, -1) if board[i] == "."]', "differs from the checked model's (legal actions)"),
    ("a dropped reward", LAST, "            return [returns[0] + rewards[0], returns[1]], None\n", "the returns differ"),
    ("a wrong end state", END, END.replace('"moves": moves}', '"moves": moves - 1}'),
     "is not the state your apply_action reaches"),
    ("a cut playout called over", END, "    return returns, None\n", "the game is cut off by the limit"),
])
def test_a_wrong_playout_is_refused_with_its_first_difference(case: str, old: str, new: str, said: str) -> None:
    wrong = FUSED.replace(old, new)
    assert wrong != FUSED, case
    evidence = check_equivalence(MODEL, wrong, settings=SETTINGS)
    assert evidence["verdict"] == "divergent", case
    assert said in evidence["reason"] and "\n" not in evidence["reason"], evidence["reason"]
    assert evidence["diverging_playouts"] == 1 and evidence["playout"]["verdict"] == "divergent"
    failure = divergence_failure(evidence)  # what the refinement prompt shows
    assert failure is not None and failure.test_type == "playout" and said in failure.diff
    assert "playout(state, returns, rand, limit) with rand = random.Random(" in failure.render(full=True)
    assert evidence_problem(evidence, MODEL, wrong) is not None


def test_a_spinning_playout_is_stopped_and_the_twin_refused() -> None:
    spins = FUSED + "\n\ndef playout(state, returns, rand, limit):\n    while True:\n        pass\n"
    evidence = check_equivalence(MODEL, spins, settings=SETTINGS)
    assert evidence["verdict"] == "refused" and evidence["playout"]["verdict"] == "refused"
    assert evidence["reason"] == ("the twin's playout could not be run: timeout: playout(...) ran longer than the "
                                  "per-call budget of 1.0 s")


@pytest.mark.parametrize("body, said", [
    ("    return [Sly(returns[0]), returns[1]], None\n", "2 finite numbers"),
    ("    return [float('nan'), 0.0], None\n", "2 finite numbers"),
    ("    return [0.0, 0.0, 0.0], None\n", "2 finite numbers"),
    ("    state['board'] = 'x'\n    return returns, None\n", "modify its input state"),
])
def test_a_hostile_playout_is_contained_and_refused(body: str, said: str) -> None:
    hostile = FUSED + f"\n\nclass Sly(float):\n    pass\n\n\ndef playout(state, returns, rand, limit):\n{body}"
    evidence = check_equivalence(MODEL, hostile, settings=SETTINGS)
    assert evidence["verdict"] == "divergent" and said in evidence["reason"], evidence["reason"]
    assert "the twin's playout broke its contract" in evidence["reason"]
    assert divergence_failure(evidence).breach


# a wrong playout (a fixed win for player 0) bound to the name playout by a match pattern, never written as
# "playout =" or "def playout": the loaded module has it, so the check must run it
MATCHED = PLAIN + """

def _p(state, returns, rand, limit):
    return [1.0, -1.0], None

match _p:
    case playout:
        pass
"""


def test_a_playout_bound_however_the_source_spells_it_is_checked() -> None:
    evidence = check_equivalence(MODEL, MATCHED, settings=SETTINGS)
    assert evidence["verdict"] == "divergent", evidence["reason"]
    assert evidence["playout"]["verdict"] == "divergent" and "the returns differ" in evidence["reason"]


def test_a_twin_whose_loaded_module_binds_no_playout_is_checked_without_one(evidence: dict) -> None:
    # a local variable named playout (an honest twin) and a module-level one never bound: no playout to check
    local = PLAIN + "\n\ndef _unused(xs):\n    playout = len(xs)\n    return playout\n"
    unbound = PLAIN + "\nif False:\n    playout = get_rewards\n"
    for twin in (local, unbound):
        checked = check_equivalence(MODEL, twin, settings=SETTINGS)
        assert checked["verdict"] == "equivalent" and checked["playout"] is None, checked["reason"]
        assert evidence_problem(checked, MODEL, twin) is None and not playout_checked(checked)
    # evidence with no playout record vouches for the twin, and only a passing record lets a planner use a playout
    assert playout_checked(evidence) and not playout_checked(dict(evidence, playout=None))
    assert evidence_problem(dict(evidence, playout=None), MODEL, FUSED) is None
    failed = dict(evidence, playout=dict(evidence["playout"], verdict="divergent"))
    assert evidence_problem(failed, MODEL, FUSED) == ("the evidence's record of the twin's playout is not a passing "
                                                      "check of it")
    assert not playout_checked(failed) and not playout_checked(dict(evidence, playout=dict(evidence["playout"], runs=0)))


def test_the_connect_four_fixture_is_an_exact_twin_of_the_real_model(tmp_path: Path) -> None:
    """tests/data/twins/c4_fused.py (the benchmark's connect four twin) against the model of the shipped real
    world-model session, replayed offline."""
    from cwm.llm import make_client
    from cwm.pipeline.recordings import recording_for
    from cwm.synthesis import SynthesisSettings, synthesize_world_model

    session = recording_for("connect_four")
    assert session is not None
    model = synthesize_world_model("connect_four", make_client(f"replay:{session}"),
                                   SynthesisSettings.of("world_model", budget=20, num_test=0),
                                   run_dir=tmp_path / "wm").best_source
    twin = (DATA / "twins" / "c4_fused.py").read_text(encoding="utf-8")
    evidence = check_equivalence(model, twin, settings=SETTINGS)
    assert evidence["verdict"] == "equivalent" and evidence["playout"]["verdict"] == "equivalent", evidence["reason"]
    late = twin.replace("        if n >= _NCELLS or not open_mask:\n            return returns, None\n",
                        "        if n >= _NCELLS:\n            return returns, None\n")
    assert late != twin  # a full board is over only when every cell is filled: the same game, said otherwise
    assert check_equivalence(model, late, settings=SETTINGS)["verdict"] == "equivalent"


DICE = (DATA / "twins" / "dice_race.py").read_text(encoding="utf-8")
DICE_PLAYOUT = '''

def playout(state, returns, rand, limit):
    pos, player, pending = list(state["pos"]), state["player"], state["pending"]
    if pos[0] >= 10 or pos[1] >= 10:
        return returns, None
    for _ in range(limit):
        u = rand()
        if not pending:
            pending = ("step", "jump")[int(u * 2)]
            continue
        acc, outcomes = 0.0, STEP if pending == "step" else JUMP
        chosen = outcomes[-1][0]
        for outcome, p in outcomes:
            acc += p
            if u < acc:
                chosen = outcome
                break
        pos[player] += int(chosen)
        if pos[player] >= 10:
            paid = [1.0, -1.0] if player == 0 else [-1.0, 1.0]
            return [returns[0] + paid[0], returns[1] + paid[1]], None
        player, pending = 1 - player, ""
    return returns, {"pos": pos, "player": player, "pending": pending}
'''


@pytest.mark.parametrize("case, old, new", [
    ("right", "", ""),
    ("chance outcomes walked backwards", "        for outcome, p in outcomes:", "        for outcome, p in outcomes[::-1]:"),
    ("a chance move drawn twice", "        acc, outcomes =", "        u = rand()\n        acc, outcomes ="),
])
def test_a_playout_through_chance_nodes_follows_the_models_outcomes(case: str, old: str, new: str) -> None:
    """The chance rule (the running sum of the probabilities in the model's order, one draw a move) on the
    hand-written dice race (tests/data/twins/dice_race.py) with a hand-written playout."""
    twin = DICE + DICE_PLAYOUT.replace(old, new)
    assert old == "" or twin != DICE + DICE_PLAYOUT
    evidence = check_equivalence(DICE, twin, settings=SETTINGS)
    assert evidence["verdict"] == ("equivalent" if case == "right" else "divergent"), (case, evidence["reason"])
    assert evidence["playout"]["verdict"] == evidence["verdict"]
