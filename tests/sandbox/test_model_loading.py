"""Loading model source: what the gate allows must also load and run in-process."""

from __future__ import annotations

import sys
from pathlib import Path

from cwm import checks, games
from cwm.games import trajectories
from cwm.model import ActionCodec, WorldModel
from cwm.sandbox import load_source

TTT = (Path(__file__).resolve().parents[1] / "data" / "reference" / "tic_tac_toe_model.py").read_text()


def test_a_model_using_dataclasses_loads_and_passes(tmp_path):
    source = ("from dataclasses import dataclass, field\n\n@dataclass(frozen=True)\nclass Marks:\n"
              "    symbols: tuple = field(default=('x', 'o'))\n\nMARKS = Marks()\n\n" + TTT)
    module = load_source(source, name="ttt_with_dataclass")
    assert module.MARKS.symbols == ("x", "o")
    assert "ttt_with_dataclass" not in sys.modules  # listed only while the module body ran
    wm = WorldModel(module, codec=ActionCodec.from_game(games.load_game("tic_tac_toe")))
    assert checks.run_checks(wm, trajectories.collect("tic_tac_toe", 2, seed=0)).all_passed


def test_loading_never_replaces_a_real_module_of_the_same_name():
    import json

    load_source(TTT, name="json")
    assert sys.modules["json"] is json
