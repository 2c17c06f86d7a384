"""`cwm train ppo BUNDLE` end to end on tic-tac-toe with a tiny step budget: trained inside the bundle's model in a
sandbox worker, the best seed's policy added to the bundle, resumed from its checkpoints, refused before a long run
from a terminal, and bad input refused in one line with nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cwm import bundle, cli
from cwm.games import trajectories
from cwm.ppo.bundle import TrainingEstimate, updates_done
from cwm.types import UsageError

TINY = ["--num-envs", "8", "--rollout", "8", "--eval-every", "1", "--eval-games", "8", "--no-progress"]


@pytest.fixture()
def ttt_bundle(tmp_path, source) -> Path:
    return bundle.export_bundle(tmp_path / "ttt", game="tic_tac_toe", model_source=source("tic_tac_toe_model.py"),
                                train=trajectories.collect("tic_tac_toe", 2, seed=0))


@pytest.fixture()
def encoder_file(tmp_path, source) -> Path:
    path = tmp_path / "encoder.py"
    path.write_text(source("tic_tac_toe_encoder.py"), encoding="utf-8")
    return path


def _record(path: Path) -> dict:
    loaded = bundle.load_bundle(path)
    assert loaded.policy is not None
    return loaded.policy.record


def test_train_ppo_adds_the_best_seed_to_the_bundle_and_resumes(ttt_bundle, encoder_file, tmp_path, capsys):
    run = tmp_path / "run"

    def argv(seeds: int) -> list[str]:
        return ["train", "ppo", str(ttt_bundle), "--encoder", str(encoder_file), "--seeds", str(seeds), "--out",
                str(run), *TINY]

    # the seeds in a process pool: the estimate's update is timed there too, since a fork of a process that has
    # run JAX deadlocks (this run hung before)
    done = subprocess.run([sys.executable, "-m", "cwm.cli", *argv(2), "--steps", "128", "--executor", "local:2"],
                          capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr
    assert "cost estimate: " in done.stderr and "4 updates left over 2 seeds" in done.stderr
    assert "2 workers here" in done.stderr and "os.fork()" not in done.stderr
    record = _record(ttt_bundle)
    curves = record["curves"]
    assert sorted(curves) == ["0", "1"] and [len(c) for c in curves.values()] == [2, 2]
    best = max(row["mean_return"] for rows in curves.values() for row in rows)  # the best of both seeds is kept
    assert record["best_score"] == best == max(row["mean_return"] for row in curves[str(record["seed"])])
    assert (run / "curve.png").read_bytes()[:4] == b"\x89PNG"
    manifest = json.loads((ttt_bundle / "manifest.json").read_text())
    assert manifest["provenance"]["ppo"]["seeds"] == [0, 1]
    assert (ttt_bundle / "encoder.py").read_text() == encoder_file.read_text()

    # more steps for seed 0 (one seed here: JAX compiles once per seed, and the choice between seeds is shown
    # above): it continues from its checkpoint (2 more updates), its first rows kept; seed 1's is left alone
    assert cli.main([*argv(1), "--steps", "256"]) == 0
    assert "2 updates left over 1 seed" in capsys.readouterr().err
    assert [updates_done(run, s) for s in (0, 1)] == [4, 2]
    resumed = _record(ttt_bundle)["curves"]
    assert sorted(resumed) == ["0"] and resumed["0"][:2] == curves["0"] and len(resumed["0"]) == 4
    # the same command again: nothing left; the bundle's encoder is used when --encoder is left out
    assert cli.main([a for a in argv(1) if a not in ("--encoder", str(encoder_file))] + ["--steps", "256"]) == 0
    assert "nothing left to train" in capsys.readouterr().err


def test_a_long_run_from_a_terminal_is_refused_before_training_without_yes(ttt_bundle, encoder_file, tmp_path,
                                                                           monkeypatch, capsys):
    class Terminal:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal())
    run = tmp_path / "run"
    code = cli.main(["train", "ppo", str(ttt_bundle), "--encoder", str(encoder_file), "--steps", "100000000",
                     "--seeds", "1", "--out", str(run), *TINY])
    err = capsys.readouterr().err
    assert code == 2 and "rerun with --yes" in err and "lower --steps or --seeds" in err
    assert not (run / "seed-0").exists() and not (ttt_bundle / "policy.npz").exists()


def test_the_estimate_refuses_only_over_the_threshold_without_yes():
    from cwm.arena import cost

    long = TrainingEstimate(update_s=2.0, updates_left=10_000, seeds_left=5, workers=5)
    assert long.wall_s == pytest.approx(4000.0)  # five seeds side by side on five workers
    with pytest.raises(UsageError, match="66.7 min of wall time"):  # from a terminal or a script alike
        cost.confirm_lines(long.lines(), long.wall_s, yes=False, smaller="lower --steps")
    cost.confirm_lines(long.lines(), long.wall_s, yes=True, smaller="lower --steps")
    small = TrainingEstimate(update_s=2.0, updates_left=100, seeds_left=5, workers=5)
    cost.confirm_lines(small.lines(), small.wall_s, yes=False, smaller="lower --steps")
    short = TrainingEstimate(update_s=2.0, updates_left=10_000, seeds_left=5, workers=1)
    assert short.wall_s == pytest.approx(20_000.0)


BAD_ENCODER = '''
def encode(observation, player_id):
    return [float(len(str(observation)))] * (1 + len(str(observation)) % 2)
'''


def test_an_encoder_that_fails_its_checks_is_refused_in_one_line(ttt_bundle, tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(BAD_ENCODER, encoding="utf-8")
    before = {p.name: p.read_bytes() for p in ttt_bundle.iterdir()}
    code = cli.main(["train", "ppo", str(ttt_bundle), "--encoder", str(bad), "--out", str(tmp_path / "run"), *TINY])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "the encoder fails its checks" in err and len(err.splitlines()) == 1
    assert {p.name: p.read_bytes() for p in ttt_bundle.iterdir()} == before
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("extra, message", [
    ([], "has no encoder.py; give the observation encoder"),
    (["--steps", "0"], "--steps must be at least 1, got 0"),
    (["--seeds", "0"], "--seeds must be at least 1, got 0"),
    (["--stop-games", "-1"], "--stop-games must be at least 0, got -1"),
])
def test_bad_arguments_are_one_line_errors(ttt_bundle, capsys, extra, message):
    assert cli.main(["train", "ppo", str(ttt_bundle), *extra, *TINY]) == 2
    assert message in capsys.readouterr().err


def test_a_checkpoint_count_reads_from_the_run(tmp_path):
    assert updates_done(tmp_path, 0) == 0
    (tmp_path / "seed-3").mkdir()
    np.savez(tmp_path / "seed-3" / "checkpoint.npz", meta=np.array(json.dumps({"update": 7})))
    assert updates_done(tmp_path, 3) == 7
