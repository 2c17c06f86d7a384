"""ClientSettings: the wrappers' settings as one frozen object, checked when built; keywords still work."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from cwm.llm import (
    ClientSettings,
    LLMConfigError,
    PromptTooLongError,
    RecordingClient,
    Request,
    ScriptedClient,
    ServerError,
    make_client,
    wrap_client,
)
from cwm.llm.fakes import Fail


def _recording(tmp_path: Path) -> Path:
    path = tmp_path / "rec.jsonl"
    RecordingClient(ScriptedClient(["a reply"], model="m"), path).complete(Request.user("q", temperature=0.0))
    return path


def _files(root: Path) -> dict[str, list[str]]:
    return {p.name: sorted(json.loads(line)["key"] for line in p.read_text().splitlines())
            for p in (root / "logs" / "llm_log.jsonl", root / "again.jsonl")}


@pytest.mark.parametrize("how", ["keywords", "settings"])
def test_make_client_takes_its_documented_keywords_or_one_settings_object(how, tmp_path):
    recording = _recording(tmp_path)
    options = {"run_dir": tmp_path / "logs", "cache": tmp_path / "cache.sqlite", "record": tmp_path / "again.jsonl",
               "max_prompt_tokens": 100}
    if how == "keywords":
        client = make_client(f"replay:{recording}", **options)
    else:
        client = make_client(f"replay:{recording}", ClientSettings(**options))
    assert client.complete(Request.user("q", temperature=0.0)).text == "a reply"
    with pytest.raises(PromptTooLongError, match="over the limit of 100"):
        client.complete(Request.user("x" * 401))
    key = Request.user("q", temperature=0.0).key("m")
    assert _files(tmp_path) == {"llm_log.jsonl": [key], "again.jsonl": [key]}
    assert (tmp_path / "cache.sqlite").is_file() and client.ledger.snapshot()["cached"] == 1


def test_keywords_go_over_the_settings_object():
    settings = ClientSettings(max_prompt_tokens=10, max_attempts=3)
    client = wrap_client(ScriptedClient(["ok"]), settings, max_prompt_tokens=100)
    assert client.complete(Request.user("c" * 41)).text == "ok"  # 11 tokens: over 10, under 100
    assert settings.max_prompt_tokens == 10  # the object given is not changed


def test_the_retry_settings_reach_the_retry_layer(fake_gemini):
    sleeps: list[float] = []
    fake_gemini.script(Fail(503), Fail(503), "third time")
    settings = ClientSettings(max_attempts=3, base_delay_s=1.0, max_delay_s=1.5, retry_seed=0, sleep=sleeps.append)
    client = make_client("gemini:gemini-test", settings, api_key="k", base_url=fake_gemini.base_url)
    assert client.complete(Request.user("q")).text == "third time"
    assert len(sleeps) == 2 and 0.5 <= sleeps[0] <= 1.0 and 0.75 <= sleeps[1] <= 1.5
    fake_gemini.script(Fail(503), Fail(503), Fail(503))
    with pytest.raises(ServerError, match="gave up after 3 attempts"):
        client.complete(Request.user("q2"))


BAD = [
    ("zero-attempts", {"max_attempts": 0}, "max_attempts must be an int >= 1, got 0"),
    ("float-concurrency", {"max_concurrency": 2.5}, "max_concurrency must be an int >= 1, got 2.5"),
    ("negative-delay", {"base_delay_s": -1}, "base_delay_s must be a finite number of seconds >= 0, got -1"),
    ("infinite-cap", {"max_delay_s": float("inf")}, "max_delay_s must be a finite number of seconds >= 0, got inf"),
    ("text-retry-after", {"max_retry_after_s": "60"}, "max_retry_after_s must be a finite number"),
    ("float-seed", {"retry_seed": 1.0}, "retry_seed must be an int or None, got 1.0"),
    ("sleep-not-callable", {"sleep": 0}, "sleep must be a function of seconds, got 0"),
    ("batch-not-bool", {"batch": "yes"}, "batch must be True or False, got 'yes'"),
    ("prompt-cap-zero", {"max_prompt_tokens": 0}, "max_prompt_tokens must be an int >= 1, got 0"),
    ("run-dir-number", {"run_dir": 3}, "run_dir must be a path or None, got 3"),
]


@pytest.mark.parametrize(("fields", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_settings_are_refused_in_one_line(fields, message):
    with pytest.raises(LLMConfigError, match=message) as caught:
        ClientSettings(**fields)
    assert "\n" not in str(caught.value)
    with pytest.raises(LLMConfigError, match=message):  # the same check, for keywords given to wrap_client
        wrap_client(ScriptedClient([]), **fields)


def test_an_unknown_setting_is_named():
    with pytest.raises(LLMConfigError, match=r"unknown client setting\(s\) \['max_attempt'\]"):
        wrap_client(ScriptedClient([]), max_attempt=2)


def test_settings_are_frozen_keyword_only_and_hold_paths(tmp_path):
    settings = ClientSettings(run_dir=str(tmp_path), cache=str(tmp_path / "c.sqlite"))
    assert settings.run_dir == tmp_path and settings.cache == tmp_path / "c.sqlite" and settings.record is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.max_attempts = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        ClientSettings(None)  # type: ignore[misc]
