"""Agents that cannot do what their names say: a ground-truth ISMCTS on a game where the generic resampler
finds no world (a 16-card deal, as a user's 21-card rummy game) is refused before the first match and told
the fix; an arena where an agent still fell back on most of its moves exits non-zero unless
--allow-fallback, and its rows and leaderboard line say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.agents import specs
from cwm.agents.specs import AgentSpecError, Settings, check_agent
from cwm.arena import ArenaError, tournament
from cwm.arena.plan import TournamentPlan
from cwm.cli import main
from planners.config import SearchConfig

DATA = Path(__file__).resolve().parent.parent / "data" / "foundation"
BLIND_DEAL = f"{DATA / 'blind_deal.py'}:blind_deal"
TINY_POKER = f"{DATA / 'tiny_poker.py'}:tiny_poker"
FAST = Settings(search=SearchConfig(num_simulations=20, rollouts=1))


def test_gt_ismcts_is_refused_where_the_resampler_finds_no_world_and_told_the_fix(tmp_path, capsys):
    for kind in ("gt-ismcts", "gt-ismcts-py"):
        with pytest.raises(AgentSpecError, match=r"no world consistent .* in 4 of 4 draws .* resample_from_infostate"):
            check_agent(kind, BLIND_DEAL, settings=FAST)
    with pytest.raises(ArenaError, match="gt-ismcts cannot play"):
        tournament(BLIND_DEAL, ["random", "gt-ismcts"], TournamentPlan(matches=1, settings=FAST),
                   out_dir=tmp_path / "lib", executor="inline", progress=False)
    code = main(["arena", BLIND_DEAL, "--agents", "random,gt-ismcts", "--matches", "1", "--sims", "20",
                 "--rollouts", "1", "--executor", "inline", "--no-progress", "--out", str(tmp_path / "cli")])
    err = capsys.readouterr().err
    assert code == 2 and "resample_from_infostate" in err and "Traceback" not in err
    assert not (tmp_path / "lib").exists() and not (tmp_path / "cli" / "matches.jsonl").exists()


def test_a_game_the_resampler_serves_passes_its_self_test():
    check_agent("gt-ismcts", TINY_POKER, settings=FAST)  # generic, exact draws
    check_agent("gt-ismcts", "leduc_poker", settings=FAST)  # the engine's own resampling


def _arena_without_self_test(monkeypatch, tmp_path, *extra: str) -> int:
    """``cwm arena`` on the 16-card deal as it was before the self-test: gt-ismcts then plays."""
    monkeypatch.setattr(specs, "resampler_self_test", lambda game: "")
    return main(["arena", BLIND_DEAL, "--agents", "random,gt-ismcts", "--matches", "2", "--sims", "20",
                 "--rollouts", "1", "--executor", "inline", "--no-progress", "--out", str(tmp_path / "arena"),
                 *extra])


def test_an_arena_where_an_agent_mostly_fell_back_exits_non_zero_and_marks_it(monkeypatch, tmp_path, capsys):
    assert _arena_without_self_test(monkeypatch, tmp_path) == 1
    out, err = capsys.readouterr()
    assert "cwm arena: error: gt-ismcts fell back to a random move on 100% of its moves" in err
    assert "--allow-fallback" in err and "Traceback" not in err
    results = json.loads((tmp_path / "arena" / "results.json").read_text())
    assert results["mostly_fallback"] == {"gt-ismcts": 1.0}
    board = (tmp_path / "arena" / "leaderboard.md").read_text()
    assert "| gt-ismcts (fell back 100%) |" in board and "| random |" in board  # the printed leaderboard too
    assert "gt-ismcts (fell back 100%)" in out
    assert [r["fallback_rate"] for r in results["leaderboard"] if r["agent"] == "gt-ismcts"] == [1.0]
    assert all("fallback_rate" not in r for r in results["leaderboard"] if r["agent"] == "random")
    assert len((tmp_path / "arena" / "matches.jsonl").read_text().splitlines()) == 4  # the results are kept


def test_allow_fallback_accepts_the_results_with_a_warning(monkeypatch, tmp_path, capsys):
    assert _arena_without_self_test(monkeypatch, tmp_path, "--allow-fallback") == 0
    err = capsys.readouterr().err
    assert "cwm arena: warning: gt-ismcts fell back to a random move on 100% of its moves" in err
    assert "(fell back 100%)" in (tmp_path / "arena" / "results.md").read_text()


def test_an_arena_without_fallback_exits_zero_and_marks_nobody(tmp_path, capsys):
    code = main(["arena", TINY_POKER, "--agents", "random,gt-ismcts", "--matches", "1", "--sims", "20",
                 "--rollouts", "1", "--executor", "inline", "--no-progress", "--out", str(tmp_path / "arena")])
    out, err = capsys.readouterr()
    assert code == 0 and "fell back" not in err and "(fell back" not in out
    assert json.loads((tmp_path / "arena" / "results.json").read_text())["mostly_fallback"] == {}
