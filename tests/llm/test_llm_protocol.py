"""The Client protocol declares what callers use (``model``, ``ledger``, ``complete``), and every client has it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.llm import (
    BadRequestError,
    BatchFileClient,
    CachedClient,
    Client,
    Ledger,
    PendingBatch,
    RecordingClient,
    ReplayClient,
    ReplayMissError,
    Request,
    ScriptedClient,
    provider_client,
    wrap_client,
)
from cwm.llm.fakes import Fail
from cwm.llm.shared import LimitedClient, RetryingClient


def _recording(tmp_path: Path) -> Path:
    path = tmp_path / "rec.jsonl"
    RecordingClient(ScriptedClient(["recorded"], model="m"), path).complete(Request.user("q", temperature=0.0))
    return path


def _clients(tmp_path: Path, base_urls: dict[str, str]) -> dict[str, Client]:
    """One client of each kind, built offline (the providers point at the fake servers)."""
    scripted = ScriptedClient(["a"])
    return {
        "scripted": scripted,
        "gemini": provider_client("gemini:gemini-test", api_key="k", base_url=base_urls["gemini"]),
        "openai": provider_client("openai:local-model", api_key="k", base_url=base_urls["openai"]),
        "replay": ReplayClient(_recording(tmp_path)),
        "batch": BatchFileClient(tmp_path / "batch"),
        "cache": CachedClient(scripted, tmp_path / "cache.sqlite"),
        "recording": RecordingClient(scripted, tmp_path / "out.jsonl"),
        "retrying": RetryingClient(scripted),
        "limited": LimitedClient(scripted),
        "managed": wrap_client(scripted),
    }


KINDS = ["scripted", "gemini", "openai", "replay", "batch", "cache", "recording", "retrying", "limited", "managed"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_client_satisfies_the_protocol(kind, tmp_path, fake_gemini, fake_openai):
    client = _clients(tmp_path, {"gemini": fake_gemini.base_url, "openai": fake_openai.base_url})[kind]
    assert isinstance(client, Client)
    assert isinstance(client.ledger, Ledger) and isinstance(client.model, str) and client.model


def test_the_protocol_refuses_a_client_without_a_ledger():
    class Bare:
        model = "bare"

        def complete(self, request):  # type: ignore[no-untyped-def]
            return ScriptedClient(["x"]).complete(request)

    assert not isinstance(Bare(), Client)
    assert isinstance(wrap_client(Bare()), Client)  # wrap_client gives a client of your own its ledger


@pytest.mark.parametrize("kind", ["cache", "recording", "retrying", "limited"])
def test_a_wrapper_shows_the_ledger_of_the_client_it_wraps(kind, tmp_path, fake_gemini, fake_openai):
    clients = _clients(tmp_path, {"gemini": fake_gemini.base_url, "openai": fake_openai.base_url})
    assert clients[kind].ledger is clients["scripted"].ledger


def test_the_managed_chain_shows_the_runs_ledger_above_the_provider(tmp_path):
    provider = ScriptedClient(["a", "b"], model="gemini-2.5-pro")
    managed = wrap_client(provider, cache=tmp_path / "c.sqlite", record=tmp_path / "r.jsonl")
    chain = [managed.inner]
    while hasattr(chain[-1], "inner"):
        chain.append(chain[-1].inner)
    assert [type(c).__name__ for c in chain] == ["RecordingClient", "CachedClient", "RetryingClient",
                                                  "LimitedClient", "ScriptedClient"]
    assert all(c.ledger is managed.ledger for c in chain[:3]) and chain[3].ledger is provider.ledger
    for _ in range(2):
        managed.complete(Request.user("q", temperature=0.0))  # the second is a cache hit
    assert managed.ledger.snapshot()["calls"] == 1 and managed.ledger.snapshot()["cached"] == 1
    assert provider.ledger.snapshot()["calls"] == 1 and provider.ledger.snapshot()["cached"] == 0


def test_providers_count_their_replies_and_errors(fake_gemini, fake_openai):
    for fake, spec in ((fake_gemini, "gemini:gemini-test"), (fake_openai, "openai:local-model")):
        fake.script("hello", Fail(400, "bad"))
        client = provider_client(spec, api_key="k", base_url=fake.base_url)
        assert client.complete(Request.user("hi")).text == "hello"
        with pytest.raises(BadRequestError):
            client.complete(Request.user("again", tag="t"))
        counts = client.ledger.snapshot()
        assert (counts["calls"], counts["errors"], counts["input_tokens"]) == (1, 1, 1), spec
        assert client.ledger.by_tag()["t"]["errors"] == 1


def test_replay_and_batch_clients_count_what_they_answered(tmp_path):
    replay = ReplayClient(_recording(tmp_path))
    replay.complete(Request.user("q", temperature=0.0))
    with pytest.raises(ReplayMissError):
        replay.complete(Request.user("not recorded", temperature=0.0))
    assert (replay.ledger.snapshot()["cached"], replay.ledger.snapshot()["errors"]) == (1, 1)
    batch = BatchFileClient(tmp_path / "batch")
    with pytest.raises(PendingBatch):
        batch.complete(Request.user("q"))
    assert batch.ledger.snapshot()["pending"] == 1


@pytest.mark.parametrize("wrapping", ["managed", "recording"])
def test_the_synthesis_engine_reads_the_ledger_of_a_wrapped_client(wrapping, tmp_path):
    from cwm.pipeline import recording_for
    from cwm.synthesis import SynthesisSettings, synthesize_world_model

    replay = ReplayClient(recording_for("tic_tac_toe"))
    llm = wrap_client(replay) if wrapping == "managed" else RecordingClient(replay, tmp_path / "again.jsonl")
    run = tmp_path / "run"
    synthesize_world_model("tic_tac_toe", llm, SynthesisSettings.of("world_model", num_test=0, isolate=False),
                           run_dir=run)
    sessions = sorted((run / "sessions").glob("*.json"))
    assert len(sessions) == 1
    assert json.loads(sessions[0].read_text()) == llm.ledger.snapshot()
    assert llm.ledger.snapshot()["cached"] == 1  # the recorded reply, counted by the ledger the engine read
