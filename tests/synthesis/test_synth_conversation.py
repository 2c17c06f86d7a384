"""The conversation strategy: one chat, failures appended, a note when a reply has no code."""

from __future__ import annotations

from pathlib import Path

from synth_helpers import program, reply, synthesize

from cwm.llm import ScriptedClient


def test_conversation_appends_failures_until_solved(tmp_path: Path) -> None:
    script = ["01_initial_buggy", "no_code", "02_refine_partial", "03_refine_correct", "01_initial_buggy"]
    llm = ScriptedClient([reply(n) for n in script])
    result = synthesize(tmp_path, llm, strategy="conversation")
    assert result.solved and result.llm_calls == 4 and llm.remaining == 1
    assert [len(c.messages) for c in llm.calls] == [1, 3, 5, 7]
    assert [m.role for m in llm.calls[3].messages] == ["user", "assistant"] * 3 + ["user"]
    first, second, third = (llm.calls[3].messages[i].text for i in (2, 4, 6))
    assert "## Failing tests" in first and "[observations] game" in first
    assert "I could not use your reply" in second and "no code" in second
    assert "226/235 checks passed" in first and "230/235 checks passed" in third
    assert llm.calls[3].messages[1].text == reply("01_initial_buggy")
    # the recorded tree is a chain through the last usable program
    assert [n.parent for n in result.nodes] == [None, 0, 0, 2]
    assert result.best_source.strip() == program("correct").strip()


def test_conversation_keeps_to_the_budget(tmp_path: Path) -> None:
    llm = ScriptedClient([reply("01_initial_buggy")] * 10)
    result = synthesize(tmp_path, llm, strategy="conversation", budget=3)
    assert result.llm_calls == 3 and len(llm.calls) == 3 and not result.solved


def test_conversation_continues_from_the_reply_of_the_best_candidate(tmp_path: Path) -> None:
    from cwm.synthesis import RequestSettings

    # two candidates per call: the second (a partial fix) beats the first, so the chat must show it
    llm = ScriptedClient([[reply("01_initial_buggy"), reply("02_refine_partial")], reply("03_refine_correct")])
    result = synthesize(tmp_path, llm, strategy="conversation", request=RequestSettings(candidates_per_call=2))
    assert result.solved and result.llm_calls == 2
    assert result.nodes[1].pass_rate > result.nodes[0].pass_rate
    assistant, followup = llm.calls[1].messages[1:]
    assert assistant.text == reply("02_refine_partial")
    assert "230/235 checks passed" in followup.text
