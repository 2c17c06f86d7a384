"""Bad arguments to the CLI get one line naming the problem and exit status 2, never a traceback."""

from __future__ import annotations

import pytest

from cwm.cli import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (["collect", "quadranto", "--n", "0"], "number of trajectories must be at least 1"),
        (["collect", "quadranto", "--deck", "closed", "--player", "2"], "--player 2 is not a player of quadranto"),
        (["collect", "no_such_game"], "unknown game 'no_such_game'"),
    ],
    ids=["zero-games", "player-out-of-range", "unknown-game"],
)
def test_bad_arguments_are_one_line_errors(argv, message, tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists()


def test_out_that_is_a_directory_is_one_line_and_leaves_no_temp_file(tmp_path, capsys):
    target = tmp_path / "existing"
    target.mkdir()
    assert main(["collect", "tic_tac_toe", "--n", "1", "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cwm collect: error: {target} is a directory") and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"] and not any(target.iterdir())


def test_out_in_an_unwritable_place_names_the_path(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    assert main(["collect", "tic_tac_toe", "--n", "1", "--out", str(blocker / "t.jsonl")]) == 2
    err = capsys.readouterr().err
    assert str(blocker) in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_failed_save_removes_its_temporary_file(tmp_path):
    from cwm.games import trajectories

    def items():
        yield trajectories.record("tic_tac_toe", seed=0)
        raise RuntimeError("stopped while writing")

    with pytest.raises(RuntimeError, match="stopped while writing"):
        trajectories.save(tmp_path / "t.jsonl", items())
    assert list(tmp_path.iterdir()) == []


def test_a_trajectory_file_that_is_not_utf8_is_named(tmp_path, capsys):
    bad = tmp_path / "latin.jsonl"
    bad.write_bytes(b'{"game": "caf\xe9"}\n')
    model = tmp_path / "m.py"
    model.write_text("x = 1\n", encoding="utf-8")
    assert main(["check", str(model), "--game", "tic_tac_toe", "--trajectories", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "latin.jsonl: not UTF-8 text" in err and len(err.strip().splitlines()) == 1


def test_bad_per_call_budget_is_one_line(tmp_path, capsys):
    from cwm.games import trajectories

    data = trajectories.save(tmp_path / "t.jsonl", trajectories.collect("tic_tac_toe", 1, seed=0))
    model = tmp_path / "m.py"
    model.write_text("x = 1\n", encoding="utf-8")
    assert main(["check", str(model), "--game", "tic_tac_toe", "--trajectories", str(data), "--per-call-s", "0"]) == 2
    assert "--per-call-s must be > 0" in capsys.readouterr().err


def test_an_unexpected_value_error_is_a_bug_and_keeps_its_traceback(tmp_path, monkeypatch):
    from cwm import games

    def broken(*args, **kwargs):
        raise ValueError("a bug inside cwm, not bad input")

    monkeypatch.setattr(games, "resolve", broken)
    with pytest.raises(ValueError, match="a bug inside cwm"):
        main(["collect", "tic_tac_toe", "--out", str(tmp_path / "t.jsonl")])


@pytest.mark.parametrize("game", ["mnk(m=x)", "mnk(q=3)"], ids=["mistyped-parameter", "unknown-parameter"])
def test_bad_game_parameters_print_only_our_one_line(game, tmp_path, capfd):
    assert main(["collect", game, "--out", str(tmp_path / "t.jsonl")]) == 2
    err = capfd.readouterr().err  # file-descriptor level: OpenSpiel's C++ writes there directly
    assert err.startswith(f"cwm collect: error: cannot load game {game!r}: OpenSpiel says: ")
    assert len(err.strip().splitlines()) == 1, err
