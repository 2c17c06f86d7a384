"""`cwm run` exits non-zero when its CWM agent fell back to random moves on most of its arena moves (its
results then measure a random player under the name `cwm`), unless --allow-fallback; the report stands."""

from __future__ import annotations

import pytest

from cwm import pipeline
from cwm.cli import main


def _report(searched: int, fell_back: int) -> dict:
    """What pipeline.run returns, with the CWM agent's pooled arena rows holding its sampling record."""
    rows = [{"agent": "cwm", "opponent": opponent, "seat": seat, "win_rate": 0.5, "draw_rate": 0.0,
             "loss_rate": 0.5, "mean_payoff": 0.0, "searched_moves": searched, "fallback_moves": fell_back}
            for opponent in ("random", "gt-ismcts") for seat in ("0", "1", "all")]
    return {"game": "leduc_poker", "llm": "replay:x", "inference": None, "arena": rows, "on_policy": {"matches": 0},
            "synthesis": {"solved": True, "llm_calls": 1, "train_accuracy": 1.0, "test_accuracy": 1.0}}


@pytest.mark.parametrize("searched, fell_back, allow, code, words", [
    (100, 51, False, 1, "cwm run: error: cwm fell back to a random move on 51% of its moves"),
    (100, 51, True, 0, "cwm run: warning: cwm fell back to a random move on 51% of its moves"),
    (100, 50, False, 0, None),  # half is not most
    (0, 0, False, 0, None),  # an agent that keeps no sampling record (MCTS on perfect information)
], ids=["most", "most-allowed", "half", "no-record"])
def test_a_run_whose_agent_mostly_fell_back_exits_non_zero(searched, fell_back, allow, code, words, monkeypatch,
                                                           tmp_path, capsys):
    monkeypatch.setattr(pipeline, "run", lambda config, out, **kw: _report(searched, fell_back))
    argv = ["run", "leduc_poker", "--out", str(tmp_path / "run"), "--quiet", *(["--allow-fallback"] if allow else [])]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert (words in err) if words else "fell back" not in err
