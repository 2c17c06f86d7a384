"""Tree search refinement: a tree of programs, the node to refine chosen by Thompson sampling.

The tree's root is the empty program; a call on the root asks for a program from scratch (the initial
prompt), a call on a node asks for a fix of that node's program (the refinement prompt, showing one
failed test of each type). Every candidate program a reply holds becomes a child.

Which nodes may be refined ("expandable"), precisely:
  * a program written from scratch is expandable when its pass rate h >= ``min_rate`` (0.01);
  * a refinement is expandable when h >= ``min_rate`` and h >= h(parent) + ``min_gain`` (0.01), i.e.
    it improved on its parent by at least one percentage point of checks. Children that do not
    improve stay in the tree (and on disk) but are not refined further; their parent stays a choice.
Each step draws from Beta(1 + C·h, 1 + C·(1 − h) + r) for every expandable node, r being the refinements
already asked of it (REx's form, the default; ``count_refinements=False`` drops r, the paper's form), and
refines the node with the largest draw. Counting r is what lets the search learn from refinements that
fail: a node whose children never improve on it is drawn less and less often instead of at a constant
rate. While no node is expandable, the root is chosen: a new program is written from scratch.
The search stops when a program passes every check, or when the LLM-call budget is spent.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence

import numpy as np

from cwm.llm import Message
from cwm.synthesis import thompson
from cwm.synthesis.engine import Engine, ExpandRule
from cwm.synthesis.render import render_failures
from cwm.synthesis.types import Node

MIN_RATE: float = 0.01
MIN_GAIN: float = 0.01


def expandable_rule(*, min_rate: float = MIN_RATE, min_gain: float = MIN_GAIN) -> ExpandRule:
    """The expandability test above as a function of (h, parent node)."""

    def rule(h: float, parent: Node | None) -> bool:
        if h < min_rate:
            return False
        return parent is None or h >= parent.pass_rate + min_gain

    return rule


class NodeChooser:
    """Chooses the node to refine next by Thompson sampling, and counts the refinements asked of each node.

    Args:
      seed: seeds ``np.random.default_rng``; one Beta draw per expandable node per choice.
      c: the concentration C of the Beta beliefs (paper: 5).
      count_refinements: add each node's refinement count to β (REx; the default). ``False`` is the
        paper's form, under which a node's belief never changes however often its refinements fail.
    """

    def __init__(self, *, seed: int = 0, c: float = thompson.DEFAULT_C, count_refinements: bool = True):
        self._rng = np.random.default_rng(seed)
        self.c, self.count_refinements = c, count_refinements
        self.refinements: collections.Counter[int] = collections.Counter()

    def choose(self, nodes: Sequence[Node]) -> Node | None:
        """The expandable node to refine (its refinement count goes up by one), or ``None`` for the root
        (write from scratch) while no node is expandable."""
        open_nodes = [n for n in nodes if n.expandable]
        if not open_nodes:
            return None
        pick = open_nodes[thompson.choose([n.pass_rate for n in open_nodes], self._rng, c=self.c,
                                          refinements=[self.refinements[n.id] for n in open_nodes],
                                          count_refinements=self.count_refinements)]
        self.refinements[pick.id] += 1
        return pick


def tree_search(
    engine: Engine,
    *,
    seed: int = 0,
    c: float = thompson.DEFAULT_C,
    count_refinements: bool = True,
    min_rate: float = MIN_RATE,
    min_gain: float = MIN_GAIN,
) -> None:
    """Runs the tree search on ``engine`` until solved or out of budget.

    Args:
      engine: the shared loop (holds the budget, the concurrency and the nodes).
      seed: seeds the Thompson sampler (see ``NodeChooser``).
      c: the concentration C of the Beta beliefs (paper: 5).
      count_refinements: add each node's refinement count to β (REx; the default); ``False``: the paper's form.
      min_rate: the smallest pass rate worth refining (paper: 0.01).
      min_gain: the improvement over its parent a refinement needs to be refined itself (paper: 0.01).
    """
    chooser = NodeChooser(seed=seed, c=c, count_refinements=count_refinements)
    rule = expandable_rule(min_rate=min_rate, min_gain=min_gain)
    try:
        while True:
            while engine.can_submit:
                _submit(engine, chooser.choose(engine.nodes))
            if not engine.in_flight:
                return
            index, parent, response = engine.next_reply()
            engine.evaluate(index, response, parent, rule)
    finally:
        engine.close()


def _submit(engine: Engine, parent: Node | None) -> None:
    target = engine.target
    if parent is None:
        text, tag = target.render("initial"), f"{target.tag}/initial"
    else:
        report = engine.reports[parent.id]
        failures = render_failures(report, target.pick_failures(report))
        text, tag = target.render("refine", code=parent.source.rstrip(), failures=failures), f"{target.tag}/refine"
    engine.submit((Message("user", text),), tag=tag, meta=parent)


__all__ = ["MIN_GAIN", "MIN_RATE", "NodeChooser", "expandable_rule", "tree_search"]
