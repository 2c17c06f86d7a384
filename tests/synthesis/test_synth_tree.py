"""Tree search with scripted replies: finds the fix and stops, keeps to the budget, survives junk, repeats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synth_helpers import BUGGY_THEN_FIXED, IndexedClient, program, reply, synthesize

from cwm.llm import ScriptedClient
from cwm.synthesis import SynthesisSettings


def test_finds_the_correct_program_and_stops(tmp_path: Path, small_test: list) -> None:
    llm = ScriptedClient([reply(n) for n in BUGGY_THEN_FIXED] + [reply("01_initial_buggy")])
    result = synthesize(tmp_path, llm, test_trajectories=small_test)
    assert result.solved and result.llm_calls == 3 and len(llm.calls) == 3 and llm.remaining == 1
    assert result.best_source.strip() == program("correct").strip()
    assert result.train_accuracy == 1.0 and result.test_accuracy == 1.0 and result.train_pass_rate == 1.0
    assert [n.parent for n in result.nodes] == [None, 0, result.nodes[2].parent]
    assert [c.tag for c in llm.calls] == ["synthesis/initial", "synthesis/refine", "synthesis/refine"]
    h = [n.pass_rate for n in result.nodes]
    assert 0.01 <= h[0] < h[1] < h[2] == 1.0
    assert [p.calls for p in result.curve] == [1, 2, 3] and result.curve[-1].best_transition_accuracy == 1.0
    for name in ("result.json", "summary.md", "accuracy.png", "best_program.py", "tree.json", "config.json"):
        assert (tmp_path / name).is_file(), name
    assert len(list((tmp_path / "calls").glob("*.prompt.md"))) == 3
    assert len(list((tmp_path / "nodes").glob("*/program.py"))) == 3
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["best_node"] == 2 and saved["prompt_hashes"] == result.prompt_hashes


def test_budget_is_never_exceeded(tmp_path: Path) -> None:
    llm = ScriptedClient([reply("01_initial_buggy")] * 20)
    result = synthesize(tmp_path, llm, budget=4)
    assert result.llm_calls == 4 and len(llm.calls) == 4 and not result.solved
    assert sorted(p.name for p in (tmp_path / "calls").glob("*.json")) == [f"{i:06d}.json" for i in range(4)]


def test_budget_holds_with_calls_in_flight(tmp_path: Path) -> None:
    llm = IndexedClient([reply("01_initial_buggy")] * 20)
    result = synthesize(tmp_path, llm, budget=5, concurrency=3)
    assert result.llm_calls == 5 and sorted(llm.asked) == list(range(5)) and set(llm.asked.values()) == {1}


def test_no_code_broken_and_hostile_replies_are_scored_not_fatal(tmp_path: Path) -> None:
    marker = Path("/tmp/cwm_pwned")
    marker.unlink(missing_ok=True)
    llm = ScriptedClient([reply("no_code"), reply("broken"), reply("hostile"), reply("03_refine_correct")])
    result = synthesize(tmp_path, llm)
    junk = result.nodes[:3]
    assert [n.pass_rate for n in junk] == [0.0, 0.0, 0.0] and not any(n.expandable for n in junk)
    assert "no usable code" in junk[0].error and junk[0].source == ""
    assert "syntax error" in junk[1].error
    assert "'os'" in junk[2].error
    # nothing was worth refining, so every call asked for a program from scratch
    assert [c.tag for c in llm.calls] == ["synthesis/initial"] * 4
    assert result.solved and result.best_node == 3 and not marker.exists()


def test_same_seed_same_run(tmp_path: Path) -> None:
    replies = [reply(n) for n in ["01_initial_buggy", "02_refine_partial", "01_initial_buggy", "two_versions",
                                  "02_refine_partial", "03_refine_correct"]] * 2

    def run(where: str, seed: int) -> dict:
        out = synthesize(tmp_path / where, IndexedClient(replies), budget=8, concurrency=3, seed=seed).outcome()
        out.pop("run_dir")
        return out

    first = run("a", 3)
    assert first == run("b", 3)
    assert first["llm_calls"] <= 8


def test_refinements_that_do_not_improve_are_not_refined(tmp_path: Path) -> None:
    llm = ScriptedClient([reply("02_refine_partial"), reply("01_initial_buggy"), reply("02_refine_partial"),
                          reply("01_initial_buggy")])
    result = synthesize(tmp_path, llm, budget=4)
    assert result.nodes[0].expandable
    # node 0's refinements are no better than it, so none is refined; its program comes back once, unchanged
    children = [n for n in result.nodes if n.parent == 0]
    assert len(children) == 2 and not any(n.expandable for n in children)
    assert children[1].duplicate_of == 0 and children[1].pass_rate == result.nodes[0].pass_rate
    # node 0 has two failing checks of one type: two refinement prompts, each sent once; then the root
    assert [c.tag for c in llm.calls] == ["synthesis/initial", "synthesis/refine", "synthesis/refine",
                                          "synthesis/initial"]
    assert result.nodes[3].parent is None


def test_no_refinement_prompt_is_sent_twice(tmp_path: Path) -> None:
    # a model that always returns the same buggy program: each refinement of it shows other failing checks
    # until none is left, then the search writes from scratch instead of resending a prompt it already sent
    llm = ScriptedClient([reply("01_initial_buggy")] * 12)
    result = synthesize(tmp_path, llm, budget=12)
    refines = [c.messages[-1].text for c in llm.calls if c.tag == "synthesis/refine"]
    assert len(refines) >= 2 and len(set(refines)) == len(refines)
    assert any(c.tag == "synthesis/initial" for c in llm.calls[1:])  # the node ran out of new prompts
    first = [n for n in result.nodes if n.parent is None][0]
    assert all(n.duplicate_of == first.id for n in result.nodes[1:])


def test_any_improvement_keeps_a_refinement_open_unless_the_paper_gain_is_asked() -> None:
    from cwm.synthesis.tree import expandable_rule
    from cwm.synthesis.types import Node

    parent = Node(id=0, parent=None, call=0, candidate=0, source="p", pass_rate=0.9974, transition_accuracy=0.9974,
                  by_type={}, error="", expandable=True, solved=False)
    assert expandable_rule()(0.9991, parent)  # a near-solved program keeps being refined
    assert not expandable_rule()(0.9974, parent) and not expandable_rule()(0.99, parent)
    assert not expandable_rule(min_gain=0.01)(0.9991, parent)  # the paper's one point would freeze it


def test_rules_and_trajectories_without_a_ground_truth(tmp_path: Path, train: list, small_test: list) -> None:
    from synth_helpers import RULES

    from cwm.synthesis import synthesize_world_model

    llm = ScriptedClient([reply("03_refine_correct")])
    result = synthesize_world_model((RULES, train), llm, SynthesisSettings.of("world_model", isolate=False), run_dir=tmp_path, test_trajectories=small_test)
    assert result.solved and result.game == "tic_tac_toe" and result.test_accuracy == 1.0
    assert RULES.strip() in llm.calls[0].messages[0].text


def test_held_out_failures_are_listed_by_rule_branch(tmp_path: Path) -> None:
    from cwm.games import trajectories
    from cwm.synthesis.report import rule_branch
    from cwm.types import CheckFailure

    # a program that mishandles the end of the game: its held-out failures follow the game's last moves
    result = synthesize(tmp_path, ScriptedClient([reply("02_refine_partial")]), budget=1,
                        test_trajectories=trajectories.collect("tic_tac_toe", 20, seed=0))
    kept = json.loads((tmp_path / "test_report.json").read_text())["report"]["failures"]
    branches = result.test_failures_by_branch
    assert result.test_accuracy is not None and result.test_accuracy < 1.0
    assert sum(branches.values()) == len(kept) > 0
    assert set(branches) <= {f"{t} after {k}" for t in result.test_by_type for k in ("x(#,#)", "o(#,#)")}
    assert list(branches.values()) == sorted(branches.values(), reverse=True)
    summary = (tmp_path / "summary.md").read_text()
    assert "## Held-out failures by rule branch" in summary and f"| {next(iter(branches))} |" in summary
    assert json.loads((tmp_path / "result.json").read_text())["test_failures_by_branch"] == branches

    def failure(*history: str) -> CheckFailure:
        return CheckFailure("legal_actions", 0, len(history), "get_legal_actions(state)", [], [], "", history=history)

    assert rule_branch(failure("Draw upcard", "Layoff 5s")) == rule_branch(failure("Layoff 9h")) == \
        "legal_actions after Layoff"
    assert rule_branch(failure()) == "legal_actions after the start"


@pytest.mark.parametrize("cut", [2, 3, 5])
def test_a_resumed_search_sends_the_prompts_an_uninterrupted_one_sends(tmp_path: Path, cut: int) -> None:
    # which refinement prompts were already sent is rebuilt on a resume from the journal, so the rotation of
    # failures and the closing of exhausted nodes go on exactly as they would have
    from synth_helpers import KillAfter, Killed

    from cwm.llm import Request

    def sent(root: Path) -> list:
        return [Request.from_json(json.loads(p.read_text())["request"]).messages
                for p in sorted((root / "calls").glob("*.json"))]

    replies = [reply("01_initial_buggy"), reply("02_refine_partial")] * 6
    whole = synthesize(tmp_path / "whole", ScriptedClient(list(replies)), seed=0, budget=10)
    first = ScriptedClient(list(replies))
    with pytest.raises(Killed):
        synthesize(tmp_path / "cut", KillAfter(first, cut), seed=0, budget=10)
    second = ScriptedClient(list(replies[cut:]))
    resumed = synthesize(tmp_path / "cut", second, seed=0, budget=10)
    assert [c.messages for c in first.calls[:cut] + second.calls] == sent(Path(whole.run_dir))
    a, b = whole.outcome(), resumed.outcome()
    a.pop("run_dir"), b.pop("run_dir")
    assert a == b


def test_a_program_first_seen_as_a_frozen_child_is_refined_when_it_comes_back_from_scratch(tmp_path: Path) -> None:
    # the buggy program first comes as a refinement worse than its parent (frozen, twice), then written from
    # scratch: that copy may be refined, since no earlier copy can be
    buggy, partial = reply("01_initial_buggy"), reply("02_refine_partial")
    llm = ScriptedClient([partial, buggy, buggy, buggy, buggy])
    result = synthesize(tmp_path, llm, budget=5)
    first, again, scratch = result.nodes[1], result.nodes[2], result.nodes[3]
    assert not first.expandable and again.duplicate_of == first.id and not again.expandable
    assert scratch.parent is None and scratch.duplicate_of == first.id and scratch.expandable
    assert llm.calls[4].tag == "synthesis/refine" and result.nodes[4].parent == scratch.id
