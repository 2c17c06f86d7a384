"""The SQLite cache: zero provider calls on re-runs, distinct samples, and concurrent writers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cwm.llm import CachedClient, LLMConfigError, Request, ScriptedClient
from cwm.llm.cache import ReplyStore

ROOT = Path(__file__).parents[2]

SESSION = [
    Request.user("deterministic question", temperature=0.0),
    Request.user("sampled question", temperature=1.0),
    Request.user("sampled question", temperature=1.0),  # the same ask again: a second, distinct sample
    Request.user("three candidates", n=3, temperature=0.0),
    Request.user("sampled question", temperature=1.0, sample_index=5),
]


def _run_session(fake, cache: Path) -> list[tuple[str, ...]]:
    client = fake.client(cache=cache)
    return [client.complete(r).texts for r in SESSION], client.ledger.snapshot()


def test_second_identical_run_makes_zero_provider_calls(fake_gemini, tmp_path):
    fake_gemini.script("a", "sample 1", "sample 2", ["x", "y", "z"], "sample at index 5")
    first, ledger1 = _run_session(fake_gemini, tmp_path / "cache.sqlite")
    assert fake_gemini.request_count == len(SESSION)
    assert first[1] != first[2]  # distinct samples stay distinct
    second, ledger2 = _run_session(fake_gemini, tmp_path / "cache.sqlite")
    assert fake_gemini.request_count == len(SESSION)  # nothing new reached the server
    assert second == first
    assert (ledger1["calls"], ledger1["cached"]) == (5, 0)
    assert (ledger2["calls"], ledger2["cached"], ledger2["input_tokens"], ledger2["cost_usd"]) == (0, 5, 0, 0.0)


def test_a_different_setting_misses_the_cache(tmp_path):
    inner = ScriptedClient(["one", "two"])
    cached = CachedClient(inner, tmp_path / "c.sqlite")
    cached.complete(Request.user("q", temperature=0.0))
    cached.complete(Request.user("q", temperature=0.0, max_output_tokens=10))
    cached.complete(Request.user("q", temperature=0.0, tag="tags are not part of the key"))
    assert len(inner.calls) == 2 and (cached.hits, cached.misses) == (1, 2)


@pytest.mark.parametrize("kind", ["directory", "not-sqlite", "under-a-file"])
def test_an_unopenable_cache_path_is_a_config_error_naming_it(tmp_path, kind):
    path = tmp_path / "cache.sqlite"
    if kind == "directory":
        path.mkdir()
    elif kind == "not-sqlite":
        path.write_bytes(b"this is not a database, just text long enough to have a header" * 4)
    else:
        (tmp_path / "file").write_text("x")
        path = tmp_path / "file" / "cache.sqlite"
    with pytest.raises(LLMConfigError, match=f"LLM cache {path} cannot be opened"):
        CachedClient(ScriptedClient([]), path)


_WRITER = textwrap.dedent("""
    import sys
    import time
    from pathlib import Path
    from cwm.llm import CachedClient, Request, Response, Usage
    name, path, barrier = sys.argv[1], sys.argv[2], Path(sys.argv[3])

    class Echo:
        model = "scripted"

        def complete(self, request):
            return Response((f"{name}: {request.last_user_text}",), ("STOP",), Usage(), 0.0, self.model)

    prompts = [f"shared {i}" for i in range(40)] + [f"{name} {i}" for i in range(N)]
    client = CachedClient(Echo(), path)
    (barrier / name).touch()  # ready: imported and connected; wait for the other writer to be ready too
    deadline = time.monotonic() + 100
    while len(list(barrier.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
    for p in prompts:
        client.complete(Request.user(p, temperature=0.0))
""")


N = 300


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "shared.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    barrier = tmp_path / "ready"  # each writer adds a file once ready and starts when both files exist
    barrier.mkdir()
    code = _WRITER.replace("range(N)", f"range({N})")
    procs = [subprocess.Popen([sys.executable, "-c", code, name, str(path), str(barrier)], env=env,
                              stderr=subprocess.PIPE)
             for name in ("alpha", "beta")]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    store = ReplyStore(path)
    assert len(store) == 40 + 2 * N
    for name in ("alpha", "beta"):
        for i in range(N):
            reply = store.get(Request.user(f"{name} {i}", temperature=0.0).key("scripted"))
            assert reply is not None and reply.text == f"{name}: {name} {i}"
    shared = store.get(Request.user("shared 7", temperature=0.0).key("scripted"))
    assert shared is not None and shared.text in ("alpha: shared 7", "beta: shared 7")  # first writer wins
    spans = [store._db.execute("SELECT MIN(created), MAX(created) FROM replies WHERE response LIKE ?",
                               (f'%"{name}: {name} %',)).fetchone() for name in ("alpha", "beta")]
    assert spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1], f"the writers did not overlap: {spans}"
