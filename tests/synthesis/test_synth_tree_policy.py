"""Which node the tree search refines, judged by behaviour on a synthetic tree of known pass rates.

No LLM and no checks: a fake refinement process stands in for them. Every node has a hidden kind, and
refining a node draws its child from a fixed, seeded distribution of that kind:

  * the root (write from scratch) gives a "path" program at level 0;
  * refining a path program at level l gives, with probability 0.25, the path program at level l + 1
    (pass rate 0.30 + 0.12·(l + 1); level 5 is the correct program, pass rate 1); with 0.15 a "trap"
    (pass rate 0.80-0.95: much better than its parent, so expandable, but a local optimum); with 0.30
    a "dead end" (1-5 points better than its parent, so expandable); otherwise a child no better than
    its parent (not expandable);
  * refining a trap or a dead end never improves it (its children are 0-10 points worse).

So the correct program is reachable only through the path branch, and once a trap exists it has the
highest pass rate in the tree. The choice is made by the library's own ``NodeChooser`` (which calls
``thompson.choose``) and expandability by its own ``expandable_rule``; uniform choice among expandable
nodes is the same chooser with C = 0 and no counts (every belief Beta(1, 1)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cwm.synthesis.tree import NodeChooser, expandable_rule
from cwm.synthesis.types import Node

BUDGET = 500  # the library's default; a run that does not solve counts the whole budget
TRIALS = 300
LEVELS = 5
P_UP, P_TRAP, P_DEAD = 0.25, 0.15, 0.30
POLICIES = {
    "default": {},
    "paper": {"count_refinements": False},
    "uniform": {"c": 0.0, "count_refinements": False},
}
RULE = expandable_rule()


def _path_rate(level: int) -> float:
    return 1.0 if level == LEVELS else 0.30 + 0.12 * level


def _child(rng: np.random.Generator, kind: str, level: int, h: float) -> tuple[str, int, float]:
    """(kind, level, pass rate) of the program a refinement of a (kind, level, h) node returns."""
    if kind == "root":
        return "path", 0, _path_rate(0)
    if kind == "path":
        u = rng.random()
        if u < P_UP:
            return "path", level + 1, _path_rate(level + 1)
        if u < P_UP + P_TRAP:
            return "trap", level, rng.uniform(0.80, 0.95)
        if u < P_UP + P_TRAP + P_DEAD:
            return "dead", level, h + rng.uniform(0.01, 0.05)
    return "stuck", level, max(0.0, h - rng.uniform(0.0, 0.10))


def calls_to_solve(chooser: NodeChooser, rng: np.random.Generator) -> int:
    """LLM calls the search makes until the correct program appears (``BUDGET`` if it never does)."""
    nodes: list[Node] = []
    hidden: list[tuple[str, int]] = []
    for call in range(1, BUDGET + 1):
        parent = chooser.choose(nodes)
        kind, level = ("root", 0) if parent is None else hidden[parent.id]
        kind, level, h = _child(rng, kind, level, 0.0 if parent is None else parent.pass_rate)
        nodes.append(Node(id=len(nodes), parent=None if parent is None else parent.id, call=call, candidate=0,
                          source="program", pass_rate=h, transition_accuracy=h, by_type={}, error="",
                          expandable=RULE(h, parent), solved=h >= 1.0))
        hidden.append((kind, level))
        if h >= 1.0:
            return call
    return BUDGET


def _calls(policy: str) -> np.ndarray:
    # the same process seeds for every policy, the chooser seeded apart from them
    return np.array([calls_to_solve(NodeChooser(seed=10_000 + t, **POLICIES[policy]), np.random.default_rng(t))
                     for t in range(TRIALS)], dtype=float)


@pytest.fixture(scope="module")
def calls() -> dict[str, np.ndarray]:
    return {policy: _calls(policy) for policy in POLICIES}


def _difference_interval(a: np.ndarray, b: np.ndarray, z: float = 2.576) -> tuple[float, float]:
    """99% normal interval on mean(a) - mean(b) (independent samples)."""
    diff = a.mean() - b.mean()
    half = z * math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return diff - half, diff + half


@pytest.mark.parametrize("other", ["paper", "uniform"])
def test_default_reaches_the_best_program_in_fewer_calls(calls: dict[str, np.ndarray], other: str) -> None:
    low, high = _difference_interval(calls[other], calls["default"])
    means = {p: round(float(c.mean()), 1) for p, c in calls.items()}
    assert low > 0, (f"{other} minus default: 99% interval ({low:.1f}, {high:.1f}) calls", means)


def test_every_policy_runs_the_whole_process(calls: dict[str, np.ndarray]) -> None:
    # the comparison means something only if the correct program is reachable and sometimes reached
    for policy, c in calls.items():
        assert len(c) == TRIALS and (c < BUDGET).mean() > 0.5, policy
    assert calls["default"].min() >= LEVELS + 1  # the root call plus one per level, at the very least


def _best_node_share(count_refinements: bool, window: slice, seeds: int = 200) -> float:
    """How often the better of two nodes whose refinements never improve (h 0.9 and 0.5) is chosen,
    within ``window`` of 200 consecutive choices, averaged over ``seeds`` choosers."""
    nodes = [Node(id=i, parent=None, call=i, candidate=0, source="program", pass_rate=h, transition_accuracy=h,
                  by_type={}, error="", expandable=True, solved=False) for i, h in enumerate((0.9, 0.5))]
    picks = np.zeros(200)
    for seed in range(seeds):
        chooser = NodeChooser(seed=seed, count_refinements=count_refinements)
        picks += [chooser.choose(nodes) is nodes[0] for _ in range(200)]
    return float(picks[window].mean() / seeds)


def test_a_stuck_best_node_is_chosen_less_often_over_time_by_default_and_at_a_constant_rate_by_the_paper() -> None:
    early, late = slice(0, 20), slice(180, 200)  # 4,000 choices each: standard error below 0.01
    assert _best_node_share(True, late) < _best_node_share(True, early) - 0.04
    paper_early, paper_late = _best_node_share(False, early), _best_node_share(False, late)
    assert abs(paper_early - paper_late) < 0.03 and paper_late > 0.8
