"""Shared behaviour: the ledger against the fake server's usage, backoff, concurrency limit, run log."""

from __future__ import annotations

import json
import threading
import time

import pytest

from cwm.llm import (
    BadRequestError,
    BlockedError,
    Ledger,
    LLMConfigError,
    RateLimitedError,
    Request,
    Response,
    ScriptedClient,
    ServerError,
    Usage,
    make_client,
    wrap_client,
)
from cwm.llm.fakes import Blocked, Fail, Reply
from cwm.llm.prices import cost_usd, price_for
from cwm.llm.shared import RetryingClient


def test_ledger_totals_equal_the_servers_reported_usage(fake_gemini, tmp_path):
    fake_gemini.script(Reply(("one two three",), thoughts_tokens=100), Fail(429), ["a", "bb", "ccc"],
                       Reply(("long " * 50,), thoughts_tokens=7), Blocked())
    client = fake_gemini.client(run_dir=tmp_path)
    client.complete(Request.user("first question " * 10))
    client.complete(Request.user("three candidates", n=3))
    client.complete(Request.user("x", system="a system text"))
    with pytest.raises(Exception, match="prompt blocked"):
        client.complete(Request.user("blocked question"))
    snapshot = client.ledger.snapshot()
    totals = {k: snapshot[k] for k in ("input_tokens", "output_tokens", "thinking_tokens")}
    assert totals == dict(fake_gemini.usage)
    assert (snapshot["calls"], snapshot["retries"], snapshot["errors"]) == (3, 1, 1)
    expected = cost_usd("gemini-2.5-pro", Usage(**fake_gemini.usage))
    assert snapshot["cost_usd"] == pytest.approx(expected)
    assert json.loads((tmp_path / "llm_ledger.json").read_text()) == snapshot


def test_run_log_has_one_line_per_request_with_reply_or_error(fake_gemini, tmp_path):
    fake_gemini.script("fine", Fail(400, "bad temperature"))
    client = fake_gemini.client(run_dir=tmp_path)
    client.complete(Request.user("q1", tag="synthesis/initial"))
    with pytest.raises(BadRequestError):
        client.complete(Request.user("q2", tag="synthesis/refine"))
    lines = [json.loads(line) for line in (tmp_path / "llm_log.jsonl").read_text().splitlines()]
    assert [e["tag"] for e in lines] == ["synthesis/initial", "synthesis/refine"]
    assert lines[0]["response"]["texts"] == ["fine"] and lines[0]["error"] is None
    assert lines[1]["error"]["type"] == "BadRequestError" and "bad temperature" in lines[1]["error"]["message"]
    assert lines[0]["request"]["messages"][0]["text"] == "q1" and len(lines[0]["key"]) == 64
    assert client.ledger.by_tag()["synthesis/refine"]["errors"] == 1


class _Flaky:
    """Fails with the given errors, then answers."""

    model = "flaky"

    def __init__(self, errors):
        self.errors, self.calls = list(errors), 0

    def complete(self, request):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return Response(("ok",), ("STOP",), Usage(1, 1, 0), 0.0, self.model)


def test_backoff_doubles_with_jitter_up_to_the_cap_and_honours_retry_after():
    sleeps: list[float] = []
    errors = [ServerError("x", status=500)] * 5 + [RateLimitedError("y", retry_after=99.0)]
    client = RetryingClient(_Flaky(errors), max_attempts=7, base_delay_s=1.0, max_delay_s=10.0,
                            sleep=sleeps.append, seed=3)
    assert client.complete(Request.user("q")).text == "ok"
    for k, (slept, full) in enumerate(zip(sleeps[:5], [1, 2, 4, 8, 10]), 1):
        assert full / 2 <= slept <= full, f"retry {k} slept {slept}"
    assert sleeps[5] == 99.0


def test_a_retry_after_past_the_cap_is_not_waited_out():
    sleeps: list[float] = []
    inner = _Flaky([RateLimitedError("daily quota", retry_after=3600.0)])
    client = RetryingClient(inner, max_attempts=5, max_retry_after_s=120.0, sleep=sleeps.append)
    with pytest.raises(RateLimitedError, match="daily quota.*asked to wait 3600 s, more than max_retry_after_s=120"):
        client.complete(Request.user("q"))
    assert sleeps == [] and inner.calls == 1
    sleeps.clear()
    assert RetryingClient(_Flaky([RateLimitedError("y", retry_after=120.0)]), sleep=sleeps.append).complete(
        Request.user("q")).text == "ok"
    assert sleeps == [120.0]  # at the cap: still waited out


def test_same_retry_seed_gives_the_same_waits():
    def waits(seed):
        sleeps: list[float] = []
        RetryingClient(_Flaky([ServerError("x")] * 3), sleep=sleeps.append, seed=seed).complete(Request.user("q"))
        return sleeps
    assert waits(1) == waits(1) != waits(2)


def test_concurrency_limit_bounds_calls_in_flight():
    state = {"now": 0, "peak": 0}
    lock = threading.Lock()

    class Slow:
        model = "slow"

        def complete(self, request):
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            time.sleep(0.05)
            with lock:
                state["now"] -= 1
            return Response(("ok",), ("STOP",), Usage(), 0.0, self.model)

    client = wrap_client(Slow(), max_concurrency=3)
    threads = [threading.Thread(target=client.complete, args=(Request.user(f"q{i}"),)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state["peak"] == 3 and client.ledger.snapshot()["calls"] == 12


PRICES = [
    ("gemini-2.5-pro", Usage(200_000, 0, 0), 0.25),  # at the tier boundary: the standard price
    ("gemini-2.5-pro-preview-06-05", Usage(0, 500_000, 500_000), 10.0),
    ("gemini-2.5-pro", Usage(300_000, 1_000_000, 0), 0.75 + 15.0),  # the long-prompt tier
    ("models/gemini-2.5-flash", Usage(1_000_000, 1_000_000, 0), 0.30 + 2.50),
    ("gemini-2.5-flash-lite", Usage(1_000_000, 0, 0), 0.10),
    ("gpt-4.1-mini", Usage(1_000_000, 1_000_000, 0), 0.40 + 1.60),  # not gpt-4.1's price
    ("gpt-4.1-2025-04-14", Usage(1_000_000, 0, 0), 2.00),
    ("o3-mini", Usage(1_000_000, 0, 0), 1.10),  # not o3's price
    ("gpt-4o-mini-2024-07-18", Usage(1_000_000, 0, 0), 0.15),
    ("gemini-2.0-flash-001", Usage(1_000_000, 0, 0), 0.10),
    ("gemini-2.5-flash-preview-09-2025", Usage(1_000_000, 0, 0), 0.30),
]


@pytest.mark.parametrize(("model", "usage", "usd"), PRICES, ids=[f"{p[0]}-{i}" for i, p in enumerate(PRICES)])
def test_price_table(model, usage, usd):
    assert cost_usd(model, usage) == pytest.approx(usd)


@pytest.mark.parametrize("model", ["gpt-4.1-nano", "o3-pro", "gemini-2.5-flash-image", "gemini-2.5-pro-tuned-x"])
def test_unlisted_siblings_of_listed_models_have_no_price(model):
    assert price_for(model) is None


def test_unpriced_models_cost_nothing_and_are_counted():
    assert price_for("my-local-llama") is None and cost_usd("my-local-llama", Usage(5, 5, 5)) is None
    ledger = Ledger()
    ledger.record(Response(("x",), ("STOP",), Usage(5, 5, 0), 0.0, "my-local-llama"))
    assert ledger.snapshot()["unpriced_calls"] == 1 and ledger.snapshot()["cost_usd"] == 0


@pytest.mark.parametrize(("spec", "options", "message"), [
    ("claude:x", {}, "the provider must be one of gemini, openai, replay, batch"),
    ("openai", {}, "needs an argument: 'openai:MODEL'"),
    ("gemini", {"api_key": "k", "temprature": 1}, r"does not take option\(s\) \['temprature'\]"),
], ids=["unknown-provider", "missing-model", "misspelt-option"])
def test_bad_specs_are_config_errors(spec, options, message):
    with pytest.raises(LLMConfigError, match=message):
        make_client(spec, **options)


class _Blocks:
    """Refuses every request, billing 100k input tokens of gemini-2.5-pro (1.25 USD per million)."""

    model = "gemini-2.5-pro"

    def complete(self, request):
        raise BlockedError("refused", usage=Usage(100_000, 0, 0))


@pytest.mark.parametrize(("batch", "usd"), [(False, 0.125), (True, 0.0625)], ids=["standard", "batch"])
def test_blocked_reply_tokens_are_priced_at_the_clients_rate(batch, usd):
    client = wrap_client(_Blocks(), batch=batch, max_attempts=1)
    with pytest.raises(BlockedError):
        client.complete(Request.user("q"))
    assert client.ledger.snapshot()["cost_usd"] == pytest.approx(usd)


def test_a_new_session_keeps_the_earlier_ledger_in_the_history(tmp_path):
    # llm_ledger.json is this session's ledger (synthesis sums sessions itself); earlier ones are kept
    first = wrap_client(ScriptedClient(["a", "b"], model="gemini-2.5-pro"), run_dir=tmp_path)
    first.complete(Request.user("q1"))
    first.complete(Request.user("q2"))
    second = wrap_client(ScriptedClient(["c"], model="gemini-2.5-pro"), run_dir=tmp_path)
    assert json.loads((tmp_path / "llm_ledger.json").read_text()) == first.ledger.snapshot()  # nothing written yet
    second.complete(Request.user("q3"))
    assert json.loads((tmp_path / "llm_ledger.json").read_text()) == second.ledger.snapshot()
    assert second.ledger.snapshot()["calls"] == 1
    history = [json.loads(line) for line in (tmp_path / "llm_ledger_history.jsonl").read_text().splitlines()]
    assert history == [first.ledger.snapshot()]
    logged = [json.loads(line) for line in (tmp_path / "llm_log.jsonl").read_text().splitlines()]
    assert len(logged) == 3  # the log holds every session's calls
    total = sum(s["cost_usd"] for s in history) + second.ledger.snapshot()["cost_usd"]
    assert total == pytest.approx(first.ledger.snapshot()["cost_usd"] + second.ledger.snapshot()["cost_usd"])
