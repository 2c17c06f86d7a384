"""A game outside the registry works everywhere a registered one does: module games and game strings."""

from __future__ import annotations

from pathlib import Path

from cwm import checks, games
from cwm.arena.plan import TournamentPlan
from cwm.cli import main
from cwm.games import oracle, trajectories

NIM = Path(__file__).resolve().parents[1] / "data" / "foundation" / "tiny_nim.py"
NIM_SPEC = f"{NIM}:tiny_nim"


def test_module_game_resolves_and_passes_the_oracle_check():
    spec = games.resolve(NIM_SPEC)
    assert (spec.players, spec.information, spec.stochastic, spec.outcome) == (2, "perfect", False, "win/draw/loss")
    trajs = trajectories.collect(NIM_SPEC, 4, seed=0)
    assert {t.steps[0].legal_action_strings for t in trajs} == {("take 1", "take 2")}
    assert checks.run_checks(oracle.oracle_model(NIM_SPEC), trajs).all_passed


def test_module_game_with_rules_file(tmp_path):
    rules = tmp_path / "nim.md"
    rules.write_text("Take one or two stones; whoever takes the last stone wins.\n")
    assert "last stone" in games.rules_text(games.resolve(NIM_SPEC, rules=rules))


def test_cli_collect_and_check_on_game_string_and_module(tmp_path, capsys):
    out = tmp_path / "mnk.jsonl"
    assert main(["collect", "mnk(m=4,n=4,k=3)", "--n", "2", "--out", str(out)]) == 0
    assert trajectories.load_open(out, game="mnk(m=4,n=4,k=3)")[0].game == "mnk(m=4,n=4,k=3)"
    nim = tmp_path / "nim.jsonl"
    assert main(["collect", NIM_SPEC, "--n", "2", "--out", str(nim)]) == 0
    assert "tiny_nim" in capsys.readouterr().out


def test_arena_on_a_module_game(tmp_path):
    from cwm import arena

    results = arena.tournament(NIM_SPEC, ["gt-mcts", "random"], TournamentPlan(matches=2), out_dir=tmp_path, executor="inline", progress=False)
    assert len(results) == 4 and all(sorted(r.returns) == [-1.0, 1.0] for r in results)
