"""A bundle's game: never imported on a manifest's word; the user names it, or trusts the engine it carries."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cwm import bundle
from cwm.agents.specs import Settings, make_agent
from cwm.cli import main
from cwm.games import trajectories
from cwm.sandbox.load import TRUST_NOTICE
from planners.config import SearchConfig


def _attacker_engine(tmp_path: Path) -> tuple[str, Path]:
    """A game module that leaves a file behind when it is imported (what an attacker's engine would do)."""
    marker = tmp_path / "engine_ran"
    return f"open({str(marker)!r}, 'w').write('imported')\n", marker


def _inspect(path: Path, capsys, *flags: str) -> tuple[int, str, str]:
    code = main(["inspect", str(path), *flags])
    out = capsys.readouterr()
    return code, out.out, out.err


def _forge_outside(path: Path, engine: str, set_manifest, rehashed) -> None:
    (path.parent / "evil.py").write_text(engine)
    set_manifest(path, game=f"{path.parent / 'evil.py'}:tic_tac_toe")


def _forge_inside(path: Path, engine: str, set_manifest, rehashed) -> None:
    rehashed(path, "game.py", engine.encode())
    set_manifest(path, game=f"{path / 'game.py'}:tic_tac_toe")


def _forge_carried(path: Path, engine: str, set_manifest, rehashed) -> None:
    rehashed(path, "game.py", engine.encode())
    set_manifest(path, game=f"{path / 'game.py'}:evil_nim", ground_truth="evil_nim",
                 game_module={"file": "game.py", "short_name": "evil_nim"})


@pytest.mark.parametrize("forge, message", [
    (_forge_outside, "never imports a game a manifest names; pass your game module (--game"),
    (_forge_inside, "lists game.py, but field 'game_module' is missing"),
    (_forge_carried, "(--game path/to/module.py:evil_nim) or trust the engine the bundle carries"),
], ids=["module-elsewhere", "game-py-without-game-module", "carried-engine"])
def test_a_module_named_by_the_manifest_is_never_imported(exported, tmp_path, capsys, set_manifest, rehashed,
                                                          forge, message):
    engine, marker = _attacker_engine(tmp_path)
    forge(exported, engine, set_manifest, rehashed)
    code, _, err = _inspect(exported, capsys)
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not marker.exists()


def test_the_game_the_caller_names_must_be_the_bundles(exported):
    assert bundle.load_bundle(exported, game="tic_tac_toe").check_report.all_passed
    with pytest.raises(bundle.BundleError, match="the bundle is of 'tic_tac_toe', not 'connect_four'"):
        bundle.load_bundle(exported, game="connect_four")
    # a cwm: agent is loaded with the arena's game: a bundle of another game is refused, not played
    with pytest.raises(bundle.BundleError, match="not 'connect_four'"):
        make_agent(f"cwm:{exported}", "connect_four", settings=Settings(search=SearchConfig(num_simulations=2)), seed=0)


def test_a_path_in_an_openspiel_game_string_is_refused(exported, set_manifest):
    set_manifest(exported, game="efg_game(filename=/etc/passwd)", ground_truth="efg_game(filename=/etc/passwd)")
    with pytest.raises(bundle.BundleError, match="neither a registry name nor an OpenSpiel game string"):
        bundle.load_bundle(exported)


@pytest.fixture()
def nim_bundle(tmp_path, nim_game, nim_model) -> Path:
    return bundle.export_bundle(tmp_path / "nim", game=nim_game, model_source=nim_model,
                                train=trajectories.collect(nim_game, 3, seed=0))


def test_a_module_game_bundle_opens_with_the_module_the_user_names(nim_bundle, nim_game, tmp_path):
    assert bundle.load_bundle(nim_bundle, game=nim_game).check_report.all_passed
    # on another machine the module lives elsewhere: its OpenSpiel short name is what is compared
    elsewhere = tmp_path / "my_games" / "nim.py"
    elsewhere.parent.mkdir()
    shutil.copyfile(nim_game.rsplit(":", 1)[0], elsewhere)
    b = bundle.load_bundle(nim_bundle, game=f"{elsewhere}:tiny_nim", trusted=True)
    assert b.model.new_initial_state().legal_action_strings() == ["take 1", "take 2"]
    with pytest.raises(bundle.BundleError, match="not 'tic_tac_toe'"):
        bundle.load_bundle(nim_bundle, game="tic_tac_toe")


def _nim_run(tmp_path: Path, nim_game: str, nim_model: str) -> Path:
    """A finished synthesis run directory of the Nim module game, as `cwm synthesize --out` leaves it."""
    run = tmp_path / "run"
    run.mkdir()
    trajectories.save(run / "train.jsonl", trajectories.collect(nim_game, 3, seed=0))
    (run / "result.json").write_text(json.dumps({"game": nim_game, "best_source": nim_model, "solved": True}))
    return run


def test_cli_exports_inspects_and_plays_a_module_game_bundle(tmp_path, capsys, nim_game, nim_model):
    run = _nim_run(tmp_path, nim_game, nim_model)
    assert main(["export", str(run), "--out", str(tmp_path / "b"), "--game", nim_game]) == 0
    assert main(["export", str(run), "--out", str(tmp_path / "b2")]) == 0  # the game the run recorded
    capsys.readouterr()
    code, out, _ = _inspect(tmp_path / "b", capsys, "--game", nim_game)
    assert code == 0 and "ground truth tiny_nim" in out and "files: check_report.json, game.py" in out
    code, _, err = _inspect(tmp_path / "b", capsys)
    assert code == 2 and "--game path/to/module.py:tiny_nim" in err and "--trust-game-module" in err
    arena = tmp_path / "arena"
    assert main(["arena", nim_game, "--agents", f"random,cwm:{tmp_path / 'b'}", "--matches", "1", "--sims", "20",
                 "--rollouts", "1", "--executor", "inline", "--out", str(arena), "--no-progress"]) == 0
    rows = [json.loads(line) for line in (arena / "matches.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["forfeit_seat"] is None for r in rows), rows


def test_a_trusted_engine_is_imported_from_the_bundle_and_leaves_nothing_behind(nim_bundle):
    """In a fresh interpreter (no Nim imported yet, bytecode writing on): refused, then trusted and imported."""
    game_py = (nim_bundle / "game.py").resolve()
    script = (
        "import sys\nfrom cwm.cli import main\n"
        f"print('plain', main(['inspect', {str(nim_bundle)!r}]))\n"
        f"print('trusted', main(['inspect', {str(nim_bundle)!r}, '--trust-game-module']))\n"
        f"files = [getattr(m, '__file__', None) for m in list(sys.modules.values())]\n"
        f"print('imported', {str(game_py)!r} in files)\n"
        f"print('again', main(['inspect', {str(nim_bundle)!r}, '--trust-game-module']))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env,
                         cwd=nim_bundle.parent)
    assert "plain 2" in out.stdout and "would run unsandboxed" in out.stderr, out.stderr
    assert "trusted 0" in out.stdout and "imported True" in out.stdout, out.stderr
    assert out.stderr.splitlines().count(TRUST_NOTICE) == 1, out.stderr  # said once, when it was imported
    assert "again 0" in out.stdout, out.stderr  # no __pycache__ was left in the bundle to be refused
    assert sorted(p.name for p in nim_bundle.iterdir()) == sorted(
        [*json.loads((nim_bundle / "manifest.json").read_text())["files"], "manifest.json"])


def test_an_older_module_game_bundle_without_its_engine_opens_with_the_users_module(nim_bundle, nim_game,
                                                                                    set_manifest):
    files = json.loads((nim_bundle / "manifest.json").read_text())["files"]
    (nim_bundle / "game.py").unlink()
    set_manifest(nim_bundle, game_module=None, files={k: v for k, v in files.items() if k != "game.py"})
    with pytest.raises(bundle.BundleError, match="carries no engine for it"):
        bundle.load_bundle(nim_bundle, trust_game_module=True)
    assert bundle.load_bundle(nim_bundle, game=nim_game).check_report.all_passed
