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
