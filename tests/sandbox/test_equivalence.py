"""The differential equivalence check (cwm.sandbox.equivalence): its detection bound on simulated data, and its
verdicts on twins of two hand-written reference models: a correct twin, twins wrong in each compared field, a
divergence reached only deep in the game, a divergence rarer than the bound, and hostile twins."""

from __future__ import annotations

import copy
import dataclasses
import glob
import hashlib
import math
from pathlib import Path

import numpy as np
import pytest

from cwm.sandbox import Limits, Sandbox
from cwm.sandbox.equivalence import EquivalenceSettings, check_equivalence, evidence_problem, playouts_for
from cwm.types import UsageError

from .conftest import make_sandbox

DATA = Path(__file__).resolve().parents[1] / "data"
TTT = (DATA / "reference" / "tic_tac_toe_model.py").read_text()
TTT_FAST = (DATA / "twins" / "ttt_fast.py").read_text()
DICE = (DATA / "twins" / "dice_race.py").read_text()
LIMITS = Limits(wall_s=60.0, cpu_s=60.0, memory_mb=1024, per_call_s=0.3)
SMALL = EquivalenceSettings(p=0.2, delta=0.05, simulations=20, limits=LIMITS)


@pytest.fixture(scope="module")
def box() -> Sandbox:
    sb = make_sandbox("process")
    yield sb
    sb.close()


def patched(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


# ---------------------------------------------------------------------------------------------------
# The bound, on simulated playouts


@pytest.mark.parametrize("p,delta", [(0.05, 0.01), (0.2, 0.05), (0.1, 0.25), (0.01, 0.1)])
def test_a_divergence_at_rate_p_is_missed_at_most_delta_of_the_time(p: float, delta: float) -> None:
    n = playouts_for(p, delta)
    rng = np.random.default_rng(7)
    trials = 20_000
    caught = (rng.random((trials, n)) < p).any(axis=1)  # each row: n playouts, each diverging with prob p
    missed = 1 - caught.mean()
    assert missed <= delta + 4 * math.sqrt(delta * (1 - delta) / trials)
    # a divergence four times rarer is missed far more often than delta: the bound speaks of rate p only
    rare = (rng.random((trials, n)) < p / 4).any(axis=1)
    assert 1 - rare.mean() > delta + 4 * math.sqrt(delta * (1 - delta) / trials)


@pytest.mark.parametrize("p,delta", [(0, 0.1), (1, 0.1), (0.1, 0), (0.1, 1.5), ("0.1", 0.1)])
def test_a_bound_outside_the_unit_interval_is_refused(p: object, delta: object) -> None:
    with pytest.raises(UsageError, match="detection bound"):
        playouts_for(p, delta)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------
# Verdicts


def test_a_correct_twin_is_equivalent_and_its_evidence_names_both_sources(box: Sandbox) -> None:
    ev = check_equivalence(TTT, TTT_FAST, settings=SMALL, sandbox=box)
    assert ev["verdict"] == "equivalent", ev["reason"]
    assert ev["reference_sha256"] == hashlib.sha256(TTT.encode()).hexdigest()
    assert ev["twin_sha256"] == hashlib.sha256(TTT_FAST.encode()).hexdigest()
    assert set(ev["kinds"]) == {"random", "mcts"}
    assert all(k["playouts"] == SMALL.playouts == 14 and k["states"] >= 5 * 14 for k in ev["kinds"].values())
    assert ev["steps_compared"] == sum(k["states"] for k in ev["kinds"].values())
    assert ev["diverging_playouts"] == 0 and ev["divergence"] is None
    assert evidence_problem(ev, TTT, TTT_FAST) is None
    assert "missed" in ev["reason"] and "\n" not in ev["reason"]


# (name, reference, patch of the twin, the field that must diverge, the player for an observation)
WRONG = [
    ("legal-set", TTT, ('return [names[i] for i in range(9) if board[i] == "."]',
                        'return [names[i] for i in range(9) if board[i] == "." and (state["moves"] != 3 or i != 8)]'),
     "legal_actions", None),
    ("termination", TTT, ('return state["winner"] != "" or state["moves"] == 9',
                          'return state["winner"] != "" or state["moves"] == 8'), "termination", None),
    ("reward", TTT, ('"o": [-1.0, 1.0]', '"o": [-1.0, 0.5]'), "rewards", None),
    ("transition", TTT, ('board = state["board"][:cell] + symbol + state["board"][cell + 1:]',
                         'board = state["board"][:cell] + symbol + state["board"][cell + 1:]\n'
                         '    board = board.replace("x", "o", 1) if state["moves"] == 5 else board'),
     "observations", 0),
    ("other-player-observation", TTT,
     ('return [first, {"board": list(state["board"]), "current_player": current}]',
      'return [first, {"board": list(state["board"]), "current_player": current.upper()}]'), "observations", 1),
]


@pytest.mark.parametrize("name,reference,patch,field,player", WRONG, ids=[w[0] for w in WRONG])
def test_a_twin_wrong_in_one_field_is_divergent_at_that_field(box: Sandbox, name: str, reference: str,
                                                               patch: tuple[str, str], field: str,
                                                               player: int | None) -> None:
    twin = patched(TTT_FAST, *patch)
    ev = check_equivalence(reference, twin, settings=SMALL, sandbox=box)
    assert ev["verdict"] == "divergent", ev["reason"]
    d = ev["divergence"]
    assert (d["field"], d["player"]) == (field, player)
    assert "\n" not in ev["reason"] and f"step {d['step']}" in ev["reason"]
    assert d["expected"] != d["got"]
    assert d["report"].startswith(f"[{field}] game {d['playout']}, step {d['step']}")
    assert len(d["history"]) == d["step"]
    assert evidence_problem(ev, reference, twin) == "the evidence's verdict is 'divergent', not 'equivalent'"


def test_a_divergence_reached_only_deep_in_the_game_is_found_at_its_first_state(box: Sandbox) -> None:
    twin = patched(TTT_FAST, 'current = "Terminal" if _over(state) else SYMBOLS[state["player"]]',
                   'current = "Terminal" if _over(state) else SYMBOLS[state["player"]] if state["moves"] < 7 else "?"')
    ev = check_equivalence(TTT, twin, settings=SMALL, sandbox=box)
    d = ev["divergence"]
    assert ev["verdict"] == "divergent" and (d["field"], d["player"], d["step"]) == ("observations", 0, 7)
    assert d["expected"]["current_player"] in "xo" and d["got"]["current_player"] == "?"


def test_a_chance_game_twin_is_checked_on_its_distribution(box: Sandbox) -> None:
    twin = patched(DICE, 'return {"pos": [0, 0], "player": 0, "pending": ""}',
                   'return {"pending": "", "player": 0, "pos": [0] * 2}')  # the same game, written otherwise
    assert check_equivalence(DICE, twin, settings=SMALL, sandbox=box)["verdict"] == "equivalent"
    wrong = patched(DICE, 'STEP = [("1", 0.5), ("2", 0.3), ("3", 0.2)]', 'STEP = [("1", 0.5), ("2", 0.25), ("3", 0.25)]')
    ev = check_equivalence(DICE, wrong, settings=SMALL, sandbox=box)
    d = ev["divergence"]
    assert ev["verdict"] == "divergent" and d["field"] == "chance_outcomes"
    assert d["expected"] == [["1", 0.5], ["2", 0.3], ["3", 0.2]] and d["got"] == [["1", 0.5], ["2", 0.25], ["3", 0.25]]


def test_a_planted_divergence_is_caught_at_the_promised_rate(box: Sandbox) -> None:
    """A twin wrong only after the opening x(0,0): 1/9 of uniformly random playouts reach it. Over 1,149
    seeded playouts the diverging fraction matches 1/9, and blocks of playouts_for(1/9, 0.2) playouts miss
    it no more often than 0.2 (within the binomial margin)."""
    twin = patched(TTT_FAST, '"player": 1 - state["player"],',
                   '"player": 0 if action == "x(0,0)" and state["moves"] == 0 else 1 - state["player"],')
    settings = EquivalenceSettings(p=0.004, delta=0.01, kinds=("random",), limits=LIMITS)
    ev = check_equivalence(TTT, twin, settings=settings, sandbox=box)
    n, flags = settings.playouts, np.zeros(settings.playouts, bool)
    flags[np.array(ev["diverging"]) - 1] = True
    assert ev["verdict"] == "divergent" and n == 1149
    assert abs(flags.mean() - 1 / 9) <= 4 * math.sqrt((1 / 9) * (8 / 9) / n)
    block = playouts_for(1 / 9, 0.2)
    blocks = flags[: n // block * block].reshape(-1, block)
    missed = 1 - blocks.any(axis=1).mean()
    assert missed <= 0.2 + 3 * math.sqrt(0.2 * 0.8 / len(blocks))


def test_a_divergence_rarer_than_the_bound_may_pass_and_the_evidence_says_so(box: Sandbox) -> None:
    """Wrong only after x(0,0) o(0,1) x(0,2) (1 in 504 random playouts): 14 playouts of each kind, sized for
    p = 0.2, miss it (these seeds do), and the evidence states the rate it speaks for and what it does not
    prove."""
    twin = patched(TTT_FAST, 'return -4 if _over(state) else state["player"]',
                   'return -4 if _over(state) or state["board"][:3] == "xox" else state["player"]')
    ev = check_equivalence(TTT, twin, settings=SMALL, sandbox=box)
    assert ev["verdict"] == "equivalent"
    assert ev["bound"]["p"] == 0.2 and ev["bound"]["miss_probability_at_p"] <= 0.05
    assert "fewer than a fraction p" in ev["does_not_prove"]


# ---------------------------------------------------------------------------------------------------
# Hostile twins, in both isolation modes


HOSTILE = [
    ("reads-env", "import os\nKEY = os.environ.get('HOME', '')\n" + TTT_FAST, "refused", "static"),
    ("writes-file", TTT_FAST.replace('def get_initial_state():\n',
                                     'def get_initial_state():\n    open("/tmp/cwm-hostile-twin", "w").write("x")\n'),
     "refused", "static"),
    ("spins", patched(TTT_FAST, "    names = NAMES[state[\"player\"]]\n",
                      "    names = NAMES[state[\"player\"]]\n    while state[\"moves\"] == 4:\n        pass\n"),
     "refused", "timeout"),
    ("lying-str", patched(TTT_FAST, "def get_chance_outcomes(state):",
                          "class Liar(str):\n    def __eq__(self, other):\n        return True\n\n"
                          "    def __hash__(self):\n        return 0\n\n\ndef get_chance_outcomes(state):").replace(
        'return [names[i] for i in range(9) if board[i] == "."]', 'return [Liar("resign")]'), "divergent", "legal"),
]


@pytest.mark.parametrize("name,twin,verdict,word", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_twin_gets_a_verdict_with_a_one_line_reason(sandbox: Sandbox, name: str, twin: str, verdict: str,
                                                              word: str) -> None:
    before = set(glob.glob("/tmp/cwm-hostile-*"))
    ev = check_equivalence(TTT, twin, settings=SMALL, sandbox=sandbox)
    assert ev["verdict"] == verdict, ev["reason"]
    assert word in ev["reason"] and "\n" not in ev["reason"] and len(ev["reason"]) <= 400
    assert evidence_problem(ev, TTT, twin) is not None
    assert set(glob.glob("/tmp/cwm-hostile-*")) == before


def test_evidence_for_other_bytes_is_refused(box: Sandbox) -> None:
    ev = check_equivalence(TTT, TTT_FAST, settings=SMALL, sandbox=box)
    assert evidence_problem(ev, TTT, TTT_FAST + "\n") == ("the evidence's twin_sha256 does not match the twin's "
                                                          f"bytes (sha256 {hashlib.sha256((TTT_FAST + chr(10)).encode()).hexdigest()[:16]}...)")
    assert "reference_sha256" in evidence_problem(ev, TTT + " ", TTT_FAST)
    assert evidence_problem([], TTT, TTT_FAST) == "the evidence is not a JSON object"


def test_a_twin_that_raises_is_divergent_with_its_error(box: Sandbox) -> None:
    twin = patched(TTT_FAST, "    cell = CELL[action]\n",
                   "    cell = CELL[action]\n    if state[\"moves\"] == 2:\n        raise ValueError(\"no third move\")\n")
    ev = check_equivalence(TTT, twin, settings=SMALL, sandbox=box)
    d = ev["divergence"]
    assert ev["verdict"] == "divergent" and (d["field"], d["step"]) == ("error", 2)
    assert "no third move" in ev["reason"] and "\n" not in ev["reason"]
    assert d["report"].startswith("[transition] game 1, step 2: the twin's playout (contract breach)")


def test_a_reference_that_breaks_its_contract_makes_the_check_inconclusive(box: Sandbox) -> None:
    broken = patched(TTT, "    row, col = int(action[2]), int(action[4])\n",
                     "    row, col = int(action[2]), int(action[4])\n    if \".\" not in state[\"board\"][3:]:\n"
                     "        raise KeyError(\"lower rows full\")\n")
    ev = check_equivalence(broken, TTT_FAST, settings=SMALL, sandbox=box)
    assert ev["verdict"] == "inconclusive" and "the reference broke its contract" in ev["reason"]
    assert evidence_problem(ev, broken, TTT_FAST) is not None


def test_the_same_sources_and_settings_give_the_same_evidence(box: Sandbox) -> None:
    wrong = patched(TTT_FAST, '"o": [-1.0, 1.0]', '"o": [-1.0, 0.5]')
    assert check_equivalence(TTT, wrong, settings=SMALL, sandbox=box) == check_equivalence(TTT, wrong, settings=SMALL,
                                                                                            sandbox=box)


def test_playouts_split_over_children_give_the_same_evidence(box: Sandbox) -> None:
    wrong = patched(TTT_FAST, '"o": [-1.0, 1.0]', '"o": [-1.0, 0.5]')
    split = dataclasses.replace(SMALL, playouts_per_child=3)
    assert check_equivalence(TTT, wrong, settings=split, sandbox=box) == check_equivalence(TTT, wrong, settings=SMALL,
                                                                                            sandbox=box)
    assert check_equivalence(TTT, TTT_FAST, settings=split, sandbox=box)["verdict"] == "equivalent"


class CountingBox:
    """A sandbox that counts the jobs run on each source (the checks' children), and otherwise is the box."""

    def __init__(self, box: Sandbox) -> None:
        self.box, self.runs = box, []

    def run(self, job: str, source: str, payload, **kwargs):  # type: ignore[no-untyped-def]
        self.runs.append((job, source, payload.get("detail")))
        return self.box.run(job, source, payload, **kwargs)


def test_a_memo_plays_the_reference_once_for_every_check_of_its_twins(box: Sandbox) -> None:
    """Checks sharing a memo (a synthesis's candidates and its final check) play the reference's seeded
    playouts once and give the evidence a check without it gives; records that could not be had are not kept."""
    from cwm.sandbox.verdicts import TRACE_JOB

    memo: dict = {}
    counted = CountingBox(box)
    wrong = patched(TTT_FAST, '"o": [-1.0, 1.0]', '"o": [-1.0, 0.5]')
    for twin in (TTT_FAST, wrong, TTT_FAST):
        kept = check_equivalence(TTT, twin, settings=SMALL, sandbox=counted, memo=memo)  # type: ignore[arg-type]
        assert kept == check_equivalence(TTT, twin, settings=SMALL, sandbox=box)
    played = [r for r in counted.runs if r[:2] == (TRACE_JOB, TTT) and r[2] is None]
    assert len(played) == 1 and len(memo) == 1  # the divergence's detail is read apart: not a playout
    other = dataclasses.replace(SMALL, seed=SMALL.seed + 1)  # other playouts: played again, kept apart
    check_equivalence(TTT, TTT_FAST, settings=other, sandbox=counted, memo=memo)  # type: ignore[arg-type]
    assert len(memo) == 2
    from cwm.sandbox.equivalence import reference_playouts, specs
    handed = reference_playouts(box, TTT, specs(SMALL), SMALL, "model", memo=memo)
    kept = copy.deepcopy(handed)
    handed[0]["actions"].clear()  # a caller that changes the records it was handed changes no later check's
    assert reference_playouts(box, TTT, specs(SMALL), SMALL, "model", memo=memo) == kept
    broken = patched(TTT, "def get_initial_state():\n", "def get_initial_state():\n    while True:\n        pass\n")
    ev = check_equivalence(broken, TTT_FAST, settings=SMALL, sandbox=box, memo=memo)
    assert ev["verdict"] == "inconclusive" and len(memo) == 2


def test_a_model_too_slow_for_one_child_is_checked_over_several() -> None:
    """Each child's CPU limit covers its share: a reference whose 28 playouts together pass one child's limit is
    inconclusive in one child and equivalent two playouts a child (CPU time, so load does not change it)."""
    slow = patched(TTT, "def get_initial_state():\n",
                   "def get_initial_state():\n    spent = 0\n    for i in range(4_000_000):\n        spent += i\n")
    limits = Limits(wall_s=120.0, cpu_s=2.0, memory_mb=1024, per_call_s=1.5)
    one = EquivalenceSettings(p=0.2, delta=0.05, simulations=2, limits=limits)
    ev = check_equivalence(slow, TTT_FAST, settings=one)
    assert ev["verdict"] == "inconclusive" and "CPU-time limit" in ev["reason"], ev["reason"]
    ev = check_equivalence(slow, TTT_FAST, settings=dataclasses.replace(one, playouts_per_child=2))
    assert ev["verdict"] == "equivalent", ev["reason"]


def test_a_malformed_record_from_a_child_refuses_the_twin() -> None:
    from cwm.sandbox.equivalence import _parsed
    from cwm.sandbox.verdicts import JobResult
    good = {"actions": [], "states": [{"player": 0, "legal": "ab", "chance": None, "rewards": [0, 0],
                                        "observations": ["a", "b"]}], "error": None}
    assert _parsed(JobResult(True, [good], "", "ok"), 1) == [good]
    for bad in ([good, good], [dict(good, actions=[1])], [dict(good, states=[])], [dict(good, extra=1)],
                [dict(good, states=[dict(good["states"][0], rewards=["1"])])], "lie"):
        assert _parsed(JobResult(True, bad, "", "ok"), 1).startswith("error: the ")  # type: ignore[union-attr]
