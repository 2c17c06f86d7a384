"""Held-out sets sized by transitions: the shortest prefix of games per share that reaches its size, the
same set on any executor, generated once and then read from the cache, fewer MCTS simulations for long
games, and what `cwm synthesize` measures by default."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

import pytest

from cwm.cli import main
from cwm.games import trajectories
from cwm.synthesis import held_out as test_sets
from cwm.synthesis.held_out import TestSetSettings, held_out_set
from cwm.types import UsageError

SMALL = TestSetSettings(300, mcts_simulations=5)
RECORDING = Path(str(importlib.resources.files("cwm").joinpath("data/recordings/tic_tac_toe.jsonl")))


def _steps(items) -> int:
    return sum(len(t.steps) for t in items)


def test_each_share_is_the_shortest_prefix_of_games_that_reaches_its_transitions(tmp_path):
    found = held_out_set("tic_tac_toe", seed=3, settings=SMALL, executor="inline", cache=tmp_path, progress=False)
    for policy in ("random", "mcts"):
        share = [t for t in found if t.policy == policy]
        assert _steps(share) >= 150 > _steps(share[:-1]), policy
        assert [t.seed for t in share] == list(range(share[0].seed, share[0].seed + len(share)))
    train = trajectories.collect("tic_tac_toe", 5, seed=3)
    assert not {t.seed for t in train} & {t.seed for t in found}


def test_the_set_does_not_depend_on_the_executor(tmp_path):
    inline = held_out_set("tic_tac_toe", settings=SMALL, executor="inline", cache=tmp_path / "a", progress=False)
    pooled = held_out_set("tic_tac_toe", settings=SMALL, executor="local:2", cache=tmp_path / "b", progress=False)
    assert [trajectories.to_json(t) for t in inline] == [trajectories.to_json(t) for t in pooled]


def test_a_set_is_generated_once_and_then_read_from_the_cache(tmp_path, monkeypatch):
    first = held_out_set("tic_tac_toe", settings=SMALL, executor="inline", cache=tmp_path, progress=False)
    def refuse(job):
        raise RuntimeError(f"a game was played again: {job}")

    monkeypatch.setattr(test_sets, "_play", refuse)
    again = held_out_set("tic_tac_toe", settings=SMALL, executor="inline", cache=tmp_path, progress=False)
    assert [trajectories.to_json(t) for t in again] == [trajectories.to_json(t) for t in first]
    assert len(list((tmp_path / "test_sets").iterdir())) == 1
    with pytest.raises(RuntimeError, match="played again"):  # another seed is another set
        held_out_set("tic_tac_toe", seed=1, settings=SMALL, executor="inline", cache=tmp_path, progress=False)


def test_long_games_play_their_mcts_share_at_fewer_simulations():
    assert test_sets.default_simulations("backgammon") == test_sets.LONG_GAME_SIMULATIONS
    assert test_sets.default_simulations("tic_tac_toe") == test_sets.DEFAULT_SIMULATIONS


@pytest.mark.parametrize("settings, message", [
    (TestSetSettings(0), "transitions must be"),
    (TestSetSettings(10, mcts_fraction=1.5), "MCTS share"),
    (TestSetSettings(10, mcts_simulations=0), "simulations must be"),
])
def test_bad_settings_are_refused(tmp_path, settings, message):
    with pytest.raises(UsageError, match=message):
        held_out_set("tic_tac_toe", settings=settings, cache=tmp_path, progress=False)


def test_cwm_synthesize_sizes_its_test_set_by_transitions_and_shares_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CWM_CACHE_DIR", str(tmp_path / "cache"))
    for run in ("a", "b"):
        assert main(["synthesize", "tic_tac_toe", "--llm", f"replay:{RECORDING}", "--out", str(tmp_path / run),
                     "--test-transitions", "200", "--test-mcts-simulations", "5", "--test-executor", "inline",
                     "--no-sandbox"]) == 0
    assert "tic_tac_toe test set" in capsys.readouterr().err  # the progress bar
    held = trajectories.load_open(tmp_path / "a" / "test.jsonl")
    assert _steps(held) >= 200 and {t.policy for t in held} == {"random", "mcts"}
    assert (tmp_path / "a" / "test.jsonl").read_text() == (tmp_path / "b" / "test.jsonl").read_text()
    assert len(list((tmp_path / "cache" / "test_sets").iterdir())) == 1
    config = json.loads((tmp_path / "a" / "config.json").read_text())
    assert config["test_transitions"] == 200 and config["num_test"] is None


def test_a_long_chance_table_is_written_once_not_once_a_game(tmp_path):
    # Bargaining's first step draws one of 1,000 instances (about 360 KB of JSON): written with every game,
    # its 10,000-transition set was 770 MB, over the 256 MB bound on reading a trajectory file.
    found = held_out_set("bargaining", settings=TestSetSettings(200, mcts_fraction=0.0), executor="inline",
                         cache=tmp_path, progress=False)
    (path,) = (tmp_path / "test_sets").iterdir()
    one_game = trajectories.save(tmp_path / "one.jsonl", found[:1]).stat().st_size
    assert len(found) >= 20 and len(found[0].steps[0].chance_outcomes) == 1000
    assert path.stat().st_size < 2 * one_game, (path.stat().st_size, one_game, len(found))  # inline: 20x
    again = trajectories.load_open(path)
    assert [trajectories.to_json(t) for t in again] == [trajectories.to_json(t) for t in found]
    assert again[0].steps[0].chance_outcomes is again[-1].steps[0].chance_outcomes  # one table in memory too
    assert found[0].steps[0].legal_action_strings is found[-1].steps[0].legal_action_strings
    with pytest.raises(trajectories.TrajectoryFormatError, match="over its limit"):  # the read bound stays
        trajectories.load_open(path, limit=path.stat().st_size - 1)
