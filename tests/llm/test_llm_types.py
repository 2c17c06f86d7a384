"""Request/Response types, the request key, and the scripted client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.llm import Client, LLMError, Message, Request, Response, ScriptedClient, Usage

DATA = Path(__file__).parents[1] / "data" / "llm"


def _golden() -> list[dict]:
    return [json.loads(line) for line in (DATA / "request_keys.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("case", _golden(), ids=lambda c: c["id"])
def test_request_key_is_stable_across_versions(case):
    # The keys were computed once and stored: a change here would orphan every cache and replay file.
    assert Request.from_json(case["request"]).key(case["model"]) == case["key"]


def test_key_ignores_tag_and_number_types_but_not_settings():
    base = Request.user("hi", temperature=0)
    assert base.key("m") == Request.user("hi", temperature=0.0, tag="other").key("m")
    for changed in (Request.user("hi", temperature=0.5), Request.user("hi", temperature=0, sample_index=1),
                    Request.user("hi!", temperature=0), Request.user("hi", temperature=0, system="s")):
        assert changed.key("m") != base.key("m")
    assert base.key("m") != base.key("other-model")


def test_request_and_response_round_trip_json():
    request = Request((Message("user", "a"), Message("assistant", "b"), Message("user", "c")), system="s",
                      n=2, seed=3, thinking_budget=10, tag="t")
    assert Request.from_json(json.loads(json.dumps(request.to_json()))) == request
    response = Response(("x", "y"), ("STOP", "MAX_TOKENS"), Usage(1, 2, 3), 0.5, "m")
    assert Response.from_json(json.loads(json.dumps(response.to_json()))) == response


@pytest.mark.parametrize("bad", [dict(messages=()), dict(messages=(Message("user", "x"),), n=0)],
                         ids=["no-messages", "zero-candidates"])
def test_invalid_requests_are_refused(bad):
    with pytest.raises(ValueError):
        Request(**bad)


BAD_SETTINGS = [
    ("negative-temperature", {"temperature": -0.1}, "temperature must be >= 0"),
    ("nan-temperature", {"temperature": float("nan")}, "temperature must be >= 0"),
    ("zero-max-output-tokens", {"max_output_tokens": 0}, "max_output_tokens must be an int >= 1"),
    ("float-max-output-tokens", {"max_output_tokens": 10.5}, "max_output_tokens must be an int >= 1"),
    ("float-n", {"n": 2.0}, "n must be an int >= 1"),
    ("bool-n", {"n": True}, "n must be an int >= 1"),
]


@pytest.mark.parametrize(("settings", "message"), [b[1:] for b in BAD_SETTINGS], ids=[b[0] for b in BAD_SETTINGS])
def test_invalid_settings_name_the_field(settings, message):
    with pytest.raises(ValueError, match=f"Request.{message}"):
        Request.user("hi", **settings)


def test_message_role_is_checked():
    with pytest.raises(ValueError, match="role"):
        Message("system", "x")  # type: ignore[arg-type]


def test_scripted_client_answers_in_order_and_then_fails_clearly():
    client = ScriptedClient(["one", ["a", "b"]], model="script")
    assert isinstance(client, Client)
    assert client.complete(Request.user("q1", n=2)).texts == ("one", "one")
    second = client.complete(Request.user("q2", n=2))
    assert second.texts == ("a", "b") and second.model == "script" and second.usage.output_tokens == 2
    assert [r.last_user_text for r in client.calls] == ["q1", "q2"]
    assert client.ledger.snapshot()["calls"] == 2
    with pytest.raises(LLMError, match="has only 2 replies; call 3.*'q3'"):
        client.complete(Request.user("q3"))


def test_numpy_integers_are_accepted_as_plain_ints():
    import numpy as np

    request = Request.user("hi", n=np.int64(2), max_output_tokens=np.int32(100))
    assert type(request.n) is int and type(request.max_output_tokens) is int
    assert request.key("m") == Request.user("hi", n=2, max_output_tokens=100).key("m")
