"""The prompt cap: a prompt estimated above the client's limit (default the model's context window) is refused
before it is sent, in one line naming the estimate, the limit and how to raise it."""

from __future__ import annotations

import pytest

from cwm.llm import LLMConfigError, Message, PromptTooLongError, Request, ScriptedClient, wrap_client
from cwm.llm.prices import DEFAULT_CONTEXT_WINDOW, context_window


@pytest.mark.parametrize("model, window", [
    ("gemini-2.5-pro", 1_048_576),
    ("gemini-2.5-pro-preview-06-05", 1_048_576),
    ("models/gemini-2.5-flash", 1_048_576),
    ("gpt-4o-2024-08-06", 128_000),
    ("gpt-4.1-mini", 1_047_576),
    ("o3-mini", 200_000),
    ("gpt-4.1-nano", DEFAULT_CONTEXT_WINDOW),  # a sibling is another model: not its bigger sibling's window
    ("qwen2.5-coder", DEFAULT_CONTEXT_WINDOW),
])
def test_context_windows_are_matched_like_prices(model, window):
    assert context_window(model) == window


def test_a_prompt_over_the_context_window_is_not_sent(fake_gemini):
    client = fake_gemini.client()  # gemini-2.5-pro: 1,048,576 tokens
    prompt = "r" * (4 * 1_048_576 + 1)  # one token over, at 4 characters a token
    with pytest.raises(PromptTooLongError) as caught:
        client.complete(Request.user(prompt, tag="synthesis/initial"))
    message = str(caught.value)
    assert fake_gemini.request_count == 0
    assert "about 1,048,577 tokens (4,194,305 characters at 4 a token)" in message
    assert "over the limit of 1,048,576 (the context window of gemini-2.5-pro)" in message
    assert "--max-prompt-tokens N" in message and "max_prompt_tokens=N" in message and "\n" not in message
    assert caught.value.estimate == 1_048_577 and caught.value.limit == 1_048_576
    snapshot = client.ledger.snapshot()
    assert snapshot["calls"] == snapshot["errors"] == 0  # not sent, so neither a call nor a provider error


def test_an_unknown_model_gets_the_small_default(fake_gemini):
    fake_gemini.script("fits")
    client = fake_gemini.client(model="gemini-test")
    assert client.complete(Request.user("a" * 4 * DEFAULT_CONTEXT_WINDOW)).text == "fits"
    with pytest.raises(PromptTooLongError, match="the default for gemini-test, a model without a known context"):
        client.complete(Request.user("a" * (4 * DEFAULT_CONTEXT_WINDOW + 1)))
    assert fake_gemini.request_count == 1


def test_the_limit_counts_the_system_text_and_every_turn(fake_openai):
    fake_openai.script("ok")
    client = fake_openai.client(max_prompt_tokens=100)
    fits = Request(messages=(Message("user", "u" * 100), Message("assistant", "a" * 100), Message("user", "v" * 100)),
                   system="s" * 100)
    assert client.complete(fits).text == "ok"
    over = Request(messages=fits.messages, system="s" * 101)
    with pytest.raises(PromptTooLongError, match=r"about 101 tokens .* over the limit of 100 \(max_prompt_tokens\)"):
        client.complete(over)
    assert fake_openai.request_count == 1


def test_a_raised_limit_lets_the_prompt_through(fake_gemini):
    fake_gemini.script("long answer")
    client = fake_gemini.client(model="gemini-test", max_prompt_tokens=100_000)
    assert client.complete(Request.user("b" * 300_000)).text == "long answer"


def test_wrap_client_takes_the_cap_too():
    inner = ScriptedClient(["never"])
    client = wrap_client(inner, max_prompt_tokens=10)
    with pytest.raises(PromptTooLongError):
        client.complete(Request.user("c" * 41))
    assert inner.calls == []


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "100"])
def test_a_bad_limit_is_refused(bad):
    with pytest.raises(LLMConfigError, match="max_prompt_tokens must be an int >= 1"):
        wrap_client(ScriptedClient([]), max_prompt_tokens=bad)
