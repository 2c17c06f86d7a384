"""Result types of synthesis: one node of the program tree, and the result of a whole run."""

from __future__ import annotations

import dataclasses
from typing import Any

from cwm.types import JSON, CheckReport


@dataclasses.dataclass(frozen=True)
class Node:
    """One candidate program in the search tree (a conversation is a tree that is a chain).

    Attributes:
      id: position in the order nodes were created (0, 1, ...).
      parent: the node whose refinement produced it; ``None`` for a program written from scratch.
      call: index of the LLM call that produced it.
      candidate: index of the program within that call's reply (a reply may hold several).
      source: the program; "" when the reply held no usable code.
      pass_rate: ``h``, the fraction of checks passed (0 when the code could not be checked).
      transition_accuracy: the fraction of recorded transitions on which every check passed.
      by_type: pass rate per test type.
      error: why it could not be checked (no code, load error, sandbox limit), else "".
      expandable: whether the tree search may refine it (see ``cwm.synthesis.tree``).
      solved: every check passed.
      duplicate_of: the first earlier node whose program is identical to this one (its report reused, no
        checks run again; a duplicate is expandable only when no earlier copy is), else ``None``.
    """

    id: int
    parent: int | None
    call: int
    candidate: int
    source: str
    pass_rate: float
    transition_accuracy: float
    by_type: dict[str, float]
    error: str
    expandable: bool
    solved: bool
    duplicate_of: int | None = None

    @classmethod
    def scored(cls, *, id: int, parent: int | None, call: int, candidate: int, source: str,
               report: CheckReport, h: float, expandable: bool) -> Node:
        return cls(id, parent, call, candidate, source, h, report.transition_accuracy,
                   {k: v.rate for k, v in report.by_type.items()}, report.error, expandable, report.all_passed)

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Node:
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class CurvePoint:
    """The best program after a number of LLM calls (for the accuracy-vs-calls plot)."""

    calls: int
    best_pass_rate: float
    best_transition_accuracy: float


@dataclasses.dataclass(frozen=True)
class SynthesisResult:
    """Everything a synthesis run produced.

    Attributes:
      target: what was synthesised ("world_model").
      game: the game's name.
      strategy: "tree" or "conversation".
      model: the LLM's model id.
      seed: the run's seed.
      budget: the LLM-call budget.
      best_source: the best program (highest pass rate, earliest on ties); "" if none was usable.
      best_node: its node id, or ``None``.
      solved: the best program passed every training check.
      train_accuracy: transition accuracy of the best program on the training trajectories.
      test_accuracy: on the held-out test trajectories (``None`` when no test set was used).
      train_pass_rate: the best program's fraction of training checks passed.
      train_by_type: pass rate per test type on the training trajectories.
      test_by_type: the same on the test trajectories (empty without a test set).
      llm_calls: LLM calls made (replayed journal entries included).
      input_tokens, output_tokens, thinking_tokens: summed over those calls.
      cost_usd: the clients' ledgers over every session of this run (0 for clients without prices), the
        requests possibly paid included.
      wall_time_s: wall time of this session.
      nodes: the whole search tree.
      curve: the best program after each call.
      prompt_hashes: content hashes of the prompt templates used.
      run_dir: where everything was saved.
      possibly_paid_calls: requests sent by a session that stopped (a kill, a crash) before their replies
        were recorded, so perhaps billed; they were sent again (and are counted again in ``llm_calls``).
      possibly_paid_usd: their cost at a high estimate (part of ``cost_usd``).
      train_checked, test_checked: how many transitions the two accuracies were measured on (``test_checked``
        ``None`` without a test set; 0 in results from before they were recorded). A perfect accuracy bounds
        the error rate only through this count (``cwm.stats.zero_failure_bound``).
      test_games: how many held-out games ``test_checked`` came from (``None`` without a test set, and in
        results from before it was recorded). A perfect held-out score bounds the per-game failure rate
        through it, which rests only on the games being independent (``cwm.stats.perfect_score_note``).
      rules: which rules the prompts held: ``"spec"`` or ``"prose"`` (the game's shipped tiers) or
        ``"sha256:<hex>"`` of another rules text; ``""`` in results from before it was recorded.
      test_failures_by_branch: the held-out failures kept in the test report (at most 20 per test type),
        counted by rule branch: ``"<test type> after <kind of the last action>"`` (``cwm.synthesis.report.
        rule_branch``), most frequent first; empty when the held-out set passed or was not used.
    """

    target: str
    game: str
    strategy: str
    model: str
    seed: int
    budget: int
    best_source: str
    best_node: int | None
    solved: bool
    train_accuracy: float
    test_accuracy: float | None
    train_pass_rate: float
    train_by_type: dict[str, float]
    test_by_type: dict[str, float]
    llm_calls: int
    input_tokens: int
    output_tokens: int
    thinking_tokens: int
    cost_usd: float
    wall_time_s: float
    nodes: tuple[Node, ...]
    curve: tuple[CurvePoint, ...]
    prompt_hashes: dict[str, str]
    run_dir: str
    possibly_paid_calls: int = 0
    possibly_paid_usd: float = 0.0
    train_checked: int = 0
    test_checked: int | None = None
    test_games: int | None = None
    rules: str = ""
    test_failures_by_branch: dict[str, int] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        data = dataclasses.asdict(self)
        data["nodes"] = [n.to_json() for n in self.nodes]
        data["curve"] = [dataclasses.asdict(p) for p in self.curve]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SynthesisResult:
        body = dict(data)
        if body.get("test_accuracy") is not None and body.get("test_checked") is None:
            body["test_checked"] = 0  # a result from before the counts were recorded: a test set, count unknown
        body["nodes"] = tuple(Node.from_json(n) for n in data["nodes"])
        body["curve"] = tuple(CurvePoint(**p) for p in data["curve"])
        return cls(**body)

    def outcome(self) -> dict[str, JSON]:
        """The result without what varies between sessions of the same run (wall time, cost, what a stop
        left possibly paid)."""
        data = self.to_json()
        for key in ("wall_time_s", "cost_usd", "possibly_paid_calls", "possibly_paid_usd"):
            del data[key]
        return data


__all__ = ["CurvePoint", "Node", "SynthesisResult"]
