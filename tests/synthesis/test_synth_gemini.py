"""Synthesis against the fake Gemini server through the real google-genai SDK."""

from __future__ import annotations

import json
from pathlib import Path

from synth_helpers import BUGGY_THEN_FIXED, reply, synthesize

from cwm.llm.testing import fake_gemini  # noqa: F401  (fixture)


def test_tree_search_end_to_end_on_fake_gemini(tmp_path: Path, fake_gemini, small_test: list) -> None:  # noqa: F811
    fake_gemini.script(*[reply(n) for n in BUGGY_THEN_FIXED])
    client = fake_gemini.client()
    result = synthesize(tmp_path, client, test_trajectories=small_test)
    assert result.solved and result.llm_calls == 3 and fake_gemini.request_count == 3
    assert result.test_accuracy == 1.0 and result.model == client.model
    assert (result.input_tokens, result.output_tokens) == (fake_gemini.usage["input_tokens"],
                                                           fake_gemini.usage["output_tokens"])
    assert result.input_tokens > 1000 and result.output_tokens > 100
    snapshot = client.ledger.snapshot()
    assert snapshot["calls"] == 3 and result.cost_usd == snapshot["cost_usd"] > 0
    body = fake_gemini.requests[0].body
    assert body["systemInstruction"]["parts"][0]["text"].startswith("You are an expert Python programmer")
    assert body["generationConfig"]["seed"] == 0 and body["generationConfig"]["temperature"] == 1.0
    journal = json.loads((tmp_path / "calls" / "000001.json").read_text())
    assert journal["tag"] == "synthesis/refine" and journal["response"]["model"] == client.model


def test_a_blocked_reply_is_scored_not_fatal(tmp_path: Path, fake_gemini) -> None:  # noqa: F811
    from cwm.llm.fakes import Blocked

    fake_gemini.script(Blocked("SAFETY"), reply("03_refine_correct"))
    result = synthesize(tmp_path, fake_gemini.client())
    assert result.solved and result.llm_calls == 2 and fake_gemini.request_count == 2
    blocked = result.nodes[0]
    assert blocked.source == "" and blocked.pass_rate == 0.0 and "no usable code" in blocked.error
    # the blocked call's billed prompt tokens are counted too
    assert result.input_tokens == fake_gemini.usage["input_tokens"]
