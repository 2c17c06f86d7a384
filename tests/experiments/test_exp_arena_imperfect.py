"""experiments/arena_figure.py on imperfect-information games, offline: the bundle (world model and inference
function, open or closed deck) synthesized from a session recorded in the test from the reference programs,
the CWM agent planning with ISMCTS on it against random and GT-ISMCTS; a game without a recording is a row."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cwm.llm.fakes import FakeOpenAI

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # CI imports tests in importlib mode: their folder is not on the path
    sys.path.append(str(HERE))
from sessions import LEDUC_INFERENCE, LEDUC_MODEL, record_closed, record_open  # noqa: E402
from test_exp_validation import refused, script  # noqa: E402

TINY = ["--matches", "1", "--sims", "10", "--rollouts", "1", "--num-test", "2", "--budget", "1",
        "--executor", "inline", "--quiet"]


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("recordings")
    record_open(folder, "leduc_poker", LEDUC_MODEL.read_text(), LEDUC_INFERENCE.read_text())
    record_closed(folder, "leduc_poker", LEDUC_MODEL.read_text() + "\n\n" + LEDUC_INFERENCE.read_text())
    return folder


def played(out: Path, deck: str, recordings: Path, extra: list[str]) -> list[dict]:
    argv = [*TINY, "--games", "leduc_poker,bargaining", "--deck", deck, "--recordings", str(recordings), *extra]
    assert script("arena_figure").main([*argv, "--out", str(out)]) == 0
    return json.loads((out / "record.json").read_text())["results"]["rows"]


@pytest.mark.parametrize("deck", ["open", "closed"])
def test_the_cwm_agent_plans_with_its_own_inference(tmp_path, recordings, monkeypatch, deck):
    out = tmp_path / deck
    opponents = [("random", 2, 0.0), ("gt-ismcts", 2, 0.0)]
    if deck == "open":  # and the direct LLM policy (a fake server on 127.0.0.1 that always checks or calls)
        with FakeOpenAI(default="Calling is cheap here.\nACTION: Call") as server:
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
            rows = played(out, deck, recordings, ["--direct-llm", "openai:local-model"])
        opponents.append(("llm:openai:local-model", 2, 0.0))
    else:
        rows = played(out, deck, recordings, [])
    leduc = [r for r in rows if r["game"] == "leduc_poker"]
    assert [(r["opponent"], r["matches"], r["forfeit_rate"]) for r in leduc] == opponents
    assert all(r["opponent_forfeits"] == 0 for r in leduc)
    # ISMCTS drew hidden histories from the bundle's inference: every draw fit its model, no move fell back
    assert all(r["sampled_worlds"] > 0 and r["rejected_draw_rate"] == 0.0 and r["fallback_rate"] == 0.0 for r in leduc)
    bundle = out / "leduc_poker" / "bundle"
    inference = (bundle / "inference.py").read_text()
    if deck == "open":  # the inference function alone, synthesized for the world model before it
        assert (out / "leduc_poker" / "inference" / "result.json").is_file()
        assert inference.strip() == LEDUC_INFERENCE.read_text().strip()
    else:  # one program is both
        assert inference == (bundle / "model.py").read_text() and not (out / "leduc_poker" / "inference").exists()
    assert rows[-1] == {"game": "bargaining", "status": "no recording",
                        "recording": str(recordings / ("" if deck == "open" else "closed") / "bargaining.jsonl")}
    md = (out / "arena.md").read_text()
    assert "| leduc_poker | gt-ismcts | 2 |" in md and "| 0.0% / 0.0% |" in md
    assert "| bargaining | no recording (" in md
    assert (out / "arena.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_given_bundle_without_inference_is_refused(tmp_path, capsys):
    from cwm import bundle
    from cwm.games import trajectories

    path = bundle.export_bundle(tmp_path / "leduc", game="leduc_poker", model_source=LEDUC_MODEL.read_text(),
                                train=trajectories.collect("leduc_poker", 2, seed=0))
    err = refused("arena_figure", ["--games", "leduc_poker", "--bundles", f"leduc_poker={path}"], tmp_path / "o",
                  capsys)
    assert "has no inference.py" in err
