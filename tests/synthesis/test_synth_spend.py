"""No under-counted spend: a synthesis killed (SIGKILL) while calls are in flight is resumed, and the ledger
counts at least every request the provider received, the calls in flight counted as possibly paid.

The provider is a fake Gemini server in this process; the run is `cwm synthesize` in a subprocess, killed
while the server holds the replies to the calls in flight, then run again to the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cwm
from cwm.llm.base import Usage
from cwm.llm.fakes import Hang
from cwm.llm.prices import cost_usd
from cwm.llm.testing import fake_gemini  # noqa: F401  (fixture)

ROOT = Path(cwm.__file__).resolve().parents[1]
NO_CODE = "I cannot write that program today."  # a reply without code: scored 0, so the run goes on
BUDGET = 8
ANSWERED_BEFORE_KILL = 4


def _command(out: Path, concurrency: int) -> list[str]:
    return [sys.executable, "-m", "cwm.cli", "synthesize", "tic_tac_toe", "--llm", "gemini:gemini-2.5-pro",
            "--out", str(out), "--budget", str(BUDGET), "--num-test", "0", "--no-sandbox", "--quiet",
            "--concurrency", str(concurrency)]


def _env(fake) -> dict[str, str]:
    return dict(os.environ, GEMINI_API_KEY="fake-key", GOOGLE_GEMINI_BASE_URL=fake.base_url,
                PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))


def _wait_for(condition, what: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _call_index(body: dict) -> int:
    return int(body["generationConfig"]["seed"])


def _sessions(out: Path) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((out / "sessions").glob("*.json"))]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_a_killed_run_never_counts_less_than_was_sent(fake_gemini, tmp_path, concurrency):  # noqa: F811
    out = tmp_path / "run"
    # calls 0..3 are answered, later ones held (a request's seed is its call index in a run of seed 0)
    fake_gemini.script_by(lambda body: NO_CODE if _call_index(body) < ANSWERED_BEFORE_KILL else Hang(120, NO_CODE))
    proc = subprocess.Popen(_command(out, concurrency), cwd=tmp_path, env=_env(fake_gemini),
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # the server holds the replies of the calls in flight until the client is dead
        _wait_for(lambda: fake_gemini.request_count == ANSWERED_BEFORE_KILL + concurrency, "the calls in flight")
        _wait_for(lambda: len(list((out / "calls").glob("*.json"))) == ANSWERED_BEFORE_KILL, "the journal")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    sent_before = fake_gemini.request_count

    fake_gemini.script_by(lambda body: NO_CODE)  # the provider answers again
    done = subprocess.run(_command(out, concurrency), cwd=tmp_path, env=_env(fake_gemini), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    billed = fake_gemini.request_count
    # the calls in flight were sent again: each paid call is a call of the budget, plus the ones cut off
    assert sent_before == ANSWERED_BEFORE_KILL + concurrency and billed == BUDGET + concurrency

    sessions = _sessions(out)
    counted = sum(s["calls"] + s.get("possibly_paid_calls", 0) for s in sessions)
    assert counted >= billed, f"the ledger counts {counted} requests, the provider received {billed}"
    assert [s.get("possibly_paid_calls", 0) for s in sessions] == [0, concurrency]
    # the cost includes an estimate for them at least as high as what the answered calls cost
    answered = cost_usd("gemini-2.5-pro", Usage(**fake_gemini.usage))
    assert sum(s["cost_usd"] for s in sessions) >= answered > 0
    assert sessions[1]["possibly_paid_usd"] > 0

    said = [line for line in done.stderr.splitlines() if "in flight" in line]
    assert len(said) == 1 and f"{concurrency} LLM request(s) were in flight" in said[0]
    record = json.loads((out / "record.json").read_text(encoding="utf-8"))
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert record["possibly_paid_calls"] == result["possibly_paid_calls"] == concurrency
    assert result["cost_usd"] == pytest.approx(sum(s["cost_usd"] for s in sessions))


# ---------------------------------------------------------------------------------------------------
# the same bookkeeping in process: a call that raises what no client raises stands for a kill


def _ledgered(replies: list[str]):
    from cwm.llm import ScriptedClient, wrap_client

    return wrap_client(ScriptedClient(replies, model="gemini-2.5-pro"))


def _cut(out: Path, k: int, **kw) -> None:
    from synth_helpers import KillAfter, Killed, synthesize

    with pytest.raises(Killed):
        synthesize(out, KillAfter(_ledgered([NO_CODE] * 20), k), **kw)


def test_a_call_cut_off_is_counted_once_even_when_it_is_never_sent_again(tmp_path):
    from synth_helpers import synthesize

    out = tmp_path / "run"
    _cut(out, 2, budget=6)
    assert [p.name for p in (out / "sending").iterdir()] == ["000002.json"]
    # resumed with a smaller budget, the run ends before call 2: counted as possibly paid, and only once
    first = synthesize(out, _ledgered([]), budget=2)
    assert first.possibly_paid_calls == 1 and first.possibly_paid_usd > 0
    assert first.cost_usd >= first.possibly_paid_usd and not list((out / "sending").iterdir())
    again = synthesize(out, _ledgered([]), budget=2)
    assert again.possibly_paid_calls == 1  # the total over sessions: nothing new counted


def test_a_call_that_failed_for_good_is_not_in_flight(tmp_path, fake_gemini):  # noqa: F811
    from synth_helpers import synthesize

    from cwm.llm import BadRequestError
    from cwm.llm.fakes import Fail

    out = tmp_path / "run"
    fake_gemini.script(NO_CODE, Fail(400, "bad request"))
    with pytest.raises(BadRequestError):
        synthesize(out, fake_gemini.client(), budget=4)
    assert not list((out / "sending").iterdir())
    fake_gemini.script_by(lambda body: NO_CODE)
    assert synthesize(out, fake_gemini.client(), budget=4).possibly_paid_calls == 0


def test_a_marker_of_a_call_journaled_after_all_is_dropped_uncounted(tmp_path):
    from synth_helpers import synthesize

    out = tmp_path / "run"
    synthesize(out, _ledgered([NO_CODE] * 3), budget=3)
    # a stop between writing the journal entry and removing the marker leaves both
    marker = {"index": 1, "request_key": "k", "model": "gemini-2.5-pro", "tag": "synthesis/initial",
              "usage_at_most": {"input_tokens": 10, "output_tokens": 10, "thinking_tokens": 0}}
    (out / "sending" / "000001.json").write_text(json.dumps(marker), encoding="utf-8")
    resumed = synthesize(out, _ledgered([]), budget=3)
    assert resumed.possibly_paid_calls == 0 and not list((out / "sending").iterdir())


def test_the_ledger_counts_possibly_paid_requests_in_its_cost():
    from cwm.llm import Ledger, Request
    from cwm.llm.base import usage_at_most

    request = Request.user("p" * 4000, max_output_tokens=1000, n=2)
    assert usage_at_most(request) == Usage(1000, 2000, 0)
    ledger = Ledger()
    ledger.record_possibly_paid("gemini-2.5-pro", usage_at_most(request), tag="synthesis/initial")
    snapshot = ledger.snapshot()
    expected = (1000 * 1.25 + 2000 * 10.0) / 1e6
    assert snapshot["possibly_paid_calls"] == 1 and snapshot["calls"] == 0
    assert snapshot["possibly_paid_usd"] == pytest.approx(expected) and snapshot["cost_usd"] == pytest.approx(expected)
    assert ledger.by_tag()["synthesis/initial"]["possibly_paid_calls"] == 1
