"""`cwm check` on one player's (closed-deck) trajectories: the joint checks of a module that defines a world model
and an inference function, in the sandbox and in this process, and what open-deck data would add. The modules are
hand-written test fixtures (the reference Leduc model and a search-based inference function), not LLM output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.cli import main
from cwm.games import trajectories
from tests.checks.test_inference_checks import SEARCH_INFERENCE_SOURCE

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"
LEDUC = (REFERENCE / "leduc_poker_model.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def closed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    games = trajectories.collect("leduc_poker", 3, seed=4)
    return trajectories.save(tmp_path_factory.mktemp("closed") / "closed.jsonl",
                             [trajectories.closed_view(t, 1) for t in games])


def _check(tmp_path: Path, source: str, data: Path, *flags: str) -> list[str]:
    model = tmp_path / "joint.py"
    model.write_text(source, encoding="utf-8")
    return ["check", str(model), "--game", "leduc_poker", "--trajectories", str(data), *flags]


@pytest.mark.parametrize("flags", [(), ("--no-sandbox",)], ids=["sandbox", "in-process"])
def test_a_correct_joint_module_passes_and_the_missing_checks_are_named(flags: tuple[str, ...], tmp_path: Path,
                                                                       closed: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    argv = _check(tmp_path, LEDUC + "\n\n" + SEARCH_INFERENCE_SOURCE, closed, *flags)
    assert main(argv) == 0
    out = capsys.readouterr().out
    moves = sum(e.action is not None for t in trajectories.load(closed) for e in t.events)  # type: ignore[union-attr]
    # one inference check per move of the player and one at each game's end, and ten random games: counted as a
    # closed-deck synthesis counts its accuracy
    assert f"inference accuracy (joint) 1.000 ({moves + 13}/{moves + 13})" in out
    assert f"inference {moves}/{moves}, inference_terminal 3/3, random_play 10/10" in out
    assert "transition accuracy" in out.split("open-deck trajectories would add")[1]  # named as what is missing
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["by_type"]["inference_terminal"] == {"passed": 3, "total": 3}


def test_a_joint_module_whose_histories_skip_moves_fails_with_the_failure_shown(tmp_path: Path, closed: Path,
                                                                                capsys: pytest.CaptureFixture[str]
                                                                                ) -> None:
    lying = SEARCH_INFERENCE_SOURCE.replace("return [action] + rest", "return rest")
    assert lying != SEARCH_INFERENCE_SOURCE
    assert main(_check(tmp_path, LEDUC + "\n\n" + lying, closed)) == 1
    out = capsys.readouterr().out
    moves = sum(e.action is not None for t in trajectories.load(closed) for e in t.events)  # type: ignore[union-attr]
    # every inference check fails; only the random games (the model itself is right) pass
    assert f"inference accuracy (joint) {10 / (moves + 13):.3f} (10/{moves + 13})" in out
    assert f"inference 0/{moves}, inference_terminal 0/3, random_play 10/10" in out and "[inference]" in out


@pytest.mark.parametrize(("source", "message"), [
    ("WORLD", "joint: missing contract function(s): resample_history"),
    ("oracle", "`oracle` has none"),
], ids=["world-model-only", "oracle"])
def test_what_cannot_be_checked_on_closed_deck_data_is_one_line(source: str, message: str, tmp_path: Path,
                                                                closed: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    argv = _check(tmp_path, LEDUC, closed)
    if source == "oracle":
        argv[1] = "oracle"
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_open_and_closed_trajectories_in_one_file_are_refused(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    game = trajectories.record("leduc_poker", seed=0)
    mixed = trajectories.save(tmp_path / "mixed.jsonl", [game, trajectories.closed_view(game, 0)])
    assert main(_check(tmp_path, LEDUC, mixed)) == 2
    assert "mixes open- and closed-deck trajectories" in capsys.readouterr().err
