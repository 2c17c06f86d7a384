"""Tree search refinement: a tree of programs, the node to refine chosen by Thompson sampling.

The tree's root is the empty program; a call on the root asks for a program from scratch (the initial
prompt), a call on a node asks for a fix of that node's program (the refinement prompt, showing one
failed test of each type). Every candidate program a reply holds becomes a child.

Which nodes may be refined ("expandable"), precisely:
  * a program written from scratch is expandable when its pass rate h >= ``min_rate`` (0.01);
  * a refinement is expandable when h >= ``min_rate`` and it improved on its parent: h > h(parent), and
    by at least ``min_gain`` (default 0: any improvement; the paper's 0.01 asks for one percentage point
    of checks, which freezes a program that went from 99.74% to 99.91% and never shows its last failure).
    Children that do not improve stay in the tree (and on disk) but are not refined further; their parent
    stays a choice;
  * a program identical to an earlier node's (``Node.duplicate_of``; its checks are not run again) is
    expandable only when no earlier copy is: one copy stands for it in the choice.

No refinement prompt is sent twice. The k-th refinement of a node shows, for each test type, its k-th
failure (cycling through that type's failures), so repeated refinements of one program show the model
other failing checks; when every variant of a node's prompt has been sent, the node is closed
(``NodeChooser.close``) and the choice falls on another node or the root. A program with a single failing
check therefore gets a single refinement prompt: a second, byte-identical one would show the model nothing
new.
Each step draws from Beta(1 + C·h, 1 + C·(1 − h) + r) for every expandable node, r being the refinements
already asked of it (REx's form, the default; ``count_refinements=False`` drops r, the paper's form), and
refines the node with the largest draw. Counting r is what lets the search learn from refinements that
fail: a node whose children never improve on it is drawn less and less often instead of at a constant
rate. While no node is expandable, the root is chosen: a new program is written from scratch.
The search stops when a program passes every check, or when the LLM-call budget is spent.
"""

from __future__ import annotations

import collections
import hashlib
from collections.abc import Callable, Sequence

import numpy as np

from cwm.llm import Message
from cwm.synthesis import thompson
from cwm.synthesis.engine import Engine, ExpandRule
from cwm.synthesis.render import render_failures
from cwm.synthesis.types import Node
from cwm.types import CheckFailure, CheckReport

MIN_RATE: float = 0.01
MIN_GAIN: float = 0.0


def expandable_rule(*, min_rate: float = MIN_RATE, min_gain: float = MIN_GAIN) -> ExpandRule:
    """The expandability test above as a function of (h, parent node)."""

    def rule(h: float, parent: Node | None) -> bool:
        if h < min_rate:
            return False
        if parent is None:
            return True
        return h > parent.pass_rate and h >= parent.pass_rate + min_gain

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
        self.closed: set[int] = set()

    def close(self, node: Node) -> None:
        """Takes ``node`` out of the choice: every refinement prompt it could give has been sent."""
        self.closed.add(node.id)

    def choose(self, nodes: Sequence[Node]) -> Node | None:
        """The expandable, open node to refine (its refinement count goes up by one), or ``None`` for the
        root (write from scratch) while there is none."""
        open_nodes = [n for n in nodes if n.expandable and n.id not in self.closed]
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
    sent: set[str] = set()  # digests of the refinement prompts sent so far (rebuilt alike on a resume)
    try:
        while True:
            while engine.can_submit:
                _submit(engine, chooser, sent)
            if not engine.in_flight:
                return
            index, parent, response = engine.next_reply()
            engine.evaluate(index, response, parent, rule)
    finally:
        engine.close()


def _submit(engine: Engine, chooser: NodeChooser, sent: set[str]) -> None:
    """Sends the next call: a refinement prompt not sent before, of the node the chooser picks (closing
    nodes that have none left), or the initial prompt when no node is open."""
    target = engine.target
    while (parent := chooser.choose(engine.nodes)) is not None:
        text = _new_refinement(engine, parent, chooser.refinements[parent.id] - 1, sent)
        if text is not None:
            engine.submit((Message("user", text),), tag=f"{target.tag}/refine", meta=parent)
            return
        chooser.close(parent)
    engine.submit((Message("user", target.render("initial")),), tag=f"{target.tag}/initial", meta=None)


def _new_refinement(engine: Engine, node: Node, round_: int, sent: set[str]) -> str | None:
    """The refinement prompt of ``node`` for its ``round_``-th refinement, or the next variant after it
    that was not sent yet (recorded in ``sent``); ``None`` when every variant was sent."""
    report = engine.reports[node.id]
    variants = max((len(f) for f in report.failed_by_type().values()), default=1)
    for shift in range(variants):
        failures = render_failures(report, failures_of_round(report, round_ + shift, engine.target.pick_failures))
        text = engine.target.render("refine", code=node.source.rstrip(), failures=failures)
        digest = hashlib.sha256(text.encode()).hexdigest()
        if digest not in sent:
            sent.add(digest)
            return text
    return None


def failures_of_round(report: CheckReport, round_: int, first: Callable[[CheckReport], list[CheckFailure]]
                      ) -> list[CheckFailure]:
    """The failures a node's ``round_``-th refinement shows: round 0 is the target's own pick (``first``);
    round k replaces each shown failure by the k-th failure of its test type (cycling), so each round
    shows other failing checks of the same types."""
    picked = first(report)
    if round_ == 0:
        return picked
    by_type = report.failed_by_type()
    return [by_type[f.test_type][round_ % len(by_type[f.test_type])] if by_type.get(f.test_type) else f
            for f in picked]


__all__ = ["MIN_GAIN", "MIN_RATE", "NodeChooser", "expandable_rule", "failures_of_round", "tree_search"]
