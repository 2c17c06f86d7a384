"""`cwm arena` builds each agent's spec once to check it before its cost estimate; the tournament it then
plays does not build them a second time (a gt-ismcts agent's resampler self-test is not run twice)."""

from __future__ import annotations

import pytest

import cwm.arena.run as arena_run
from cwm.agents.specs import Settings
from cwm.cli import main
from planners.config import SearchConfig


@pytest.fixture
def checks(monkeypatch) -> list[str]:
    """The specs ``check_agents`` builds, in order."""
    seen: list[str] = []
    real = arena_run.check_agent

    def counted(spec, game, *, settings):
        seen.append(str(spec))
        return real(spec, game, settings=settings)

    monkeypatch.setattr(arena_run, "check_agent", counted)
    return seen


def test_the_arena_command_checks_each_agent_once(tmp_path, checks):
    assert main(["arena", "tic_tac_toe", "--agents", "random,gt-mcts", "--matches", "1", "--sims", "5",
                 "--out", str(tmp_path / "a"), "--executor", "inline", "--no-progress", "--yes"]) == 0
    assert sorted(checks) == ["gt-mcts", "random"]


def test_a_tournament_checks_what_was_checked_for_another_game_or_other_settings_again(tmp_path, checks):
    from cwm import arena

    plan = arena.TournamentPlan(matches=1, settings=Settings(search=SearchConfig(num_simulations=5, rollouts=1)), seed=0)
    done = arena_run.check_agents("tic_tac_toe", {"random": "random"}, plan.settings)
    arena.tournament("tic_tac_toe", ["random", "gt-mcts"], plan, out_dir=tmp_path / "t", executor="inline",
                     progress=False, checked=done)
    assert checks == ["random", "gt-mcts"]  # the one not checked before, only
    other = arena_run.check_agents("connect_four", {"random": "random", "gt-mcts": "gt-mcts"}, plan.settings)
    arena.tournament("tic_tac_toe", ["random", "gt-mcts"], plan, out_dir=tmp_path / "u", executor="inline",
                     progress=False, checked=other)
    assert checks[-2:] == ["random", "gt-mcts"] and len(checks) == 6  # checked for another game: again


@pytest.mark.parametrize("change", ["edited", "exported-anew", "removed"])
def test_a_bundle_changed_after_its_check_stops_the_tournament_with_its_name(tmp_path, change):
    """A bundle ``check_agents`` checked and then changed on disk (a file edited, the bundle re-exported with
    other files, or removed) is not played: the tournament fails at once, in one line naming the bundle and
    the agent, before any match (it would otherwise forfeit every match, or play a bundle nobody checked)."""
    import hashlib
    import json
    import shutil
    from pathlib import Path

    from cwm import arena, bundle
    from cwm.games import trajectories

    source = (Path(__file__).resolve().parents[1] / "data" / "synthesis" / "ttt_correct.py").read_text()
    path = bundle.export_bundle(tmp_path / "b", game="tic_tac_toe", model_source=source,
                                train=trajectories.collect("tic_tac_toe", 2, seed=0))
    plan = arena.TournamentPlan(matches=1, settings=Settings(search=SearchConfig(num_simulations=5, rollouts=1)), seed=0)
    agent = f"cwm:{path}"  # as a tournament builds it (a label or a relative path is checked again anyway)
    done = arena_run.check_agents("tic_tac_toe", {agent: agent, "random": "random"}, plan.settings)
    edited = source + "\n# changed after the check\n"
    if change == "removed":
        shutil.rmtree(path)
    else:
        (path / "model.py").write_text(edited)
    if change == "exported-anew":  # consistent again: the manifest holds the new file's hash
        manifest = json.loads((path / "manifest.json").read_text())
        manifest["files"]["model.py"] = hashlib.sha256(edited.encode()).hexdigest()
        (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(arena.ArenaError) as e:
        arena.tournament("tic_tac_toe", [agent, "random"], plan, out_dir=tmp_path / "t",
                         executor="inline", progress=False, checked=done)
    message = str(e.value)
    assert "\n" not in message and f"the bundle {path} changed on disk" in message and f"agent {agent}:" in message
    assert not (tmp_path / "t" / "matches.jsonl").exists()
