"""Cairn, the held-out melding game of ``experiments/heldout/``: scripted games follow and score as its rulebook says, and
random play reaches its rare rule branches only sometimes. What every held-out game must pass (simulation,
oracle, resampling, illegal actions, no specification in the rulebook) is in test_heldout_games.py."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from cwm.cli import main
from cwm.llm import RecordingClient, ScriptedClient
from cwm.synthesis import SynthesisSettings, synthesize_world_model

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the experiments folder is not installed
    sys.path.append(str(ROOT))
from experiments.heldout import cairn  # noqa: E402
from tests.games.test_heldout_games import random_games  # noqa: E402
from tests.games.test_prose_rules import offences  # noqa: E402

MODULE = ROOT / "experiments" / "heldout" / "cairn.py"
SPEC = f"{MODULE}:cairn"


def play(moves: str, deal: str) -> cairn.CairnState:
    """A game from the stones dealt (``deal``: the nine of the deal, then one per bag draw, in order) and the
    players' moves written as the rulebook writes them (``"take; discard S1; draw; ..."``)."""
    stones = iter(deal.split())
    state = cairn.CairnGame().new_initial_state()
    for _ in range(cairn.DEALT):
        state.apply_action(_stone(next(stones)))
    for move in [m.strip() for m in moves.split(";")]:
        player = state.current_player()
        (action,) = [a for a in state.legal_actions() if state.action_to_string(player, a) == move]
        state.apply_action(action)
        if move == "draw":
            state.apply_action(_stone(next(stones)))
    return state


def _stone(name: str) -> int:
    return cairn.COLOURS.index(name[0]) * cairn.RANKS + int(name[1]) - 1


def test_random_play_reaches_every_rule_branch_only_sometimes():
    """Building, laying on, knocking, going out and both early endings happen, the rare ones in few games."""
    seen: dict[str, int] = {}
    for path, final in random_games("cairn", 200, seed=7):
        moves = {s.action_to_string(s.current_player(), a).split()[0]
                 for s, a in zip(path, final.history()) if not s.is_chance_node()}
        for kind in moves | {f"end {final.ended[0]}"}:
            seen[kind] = seen.get(kind, 0) + 1
        assert len(final.history()) <= cairn.MAX_GAME_LENGTH
    assert {"build", "lay", "knock", "end out", "end bag", "end turns", "end knock"} <= set(seen)
    assert seen["lay"] < 40 and seen["end out"] < 20  # rare: five random games often show neither


# Scripted games. The deal: S1 O1 M1 S2 O2 M2 S3 O3 to the hands (player 0 gets S1 M1 O2 S3, player 1 gets
# O1 S2 M2 O3), then M6 face up.
DEAL = "S1 O1 M1 S2 O2 M2 S3 O3 M6"


def test_a_taken_stone_cannot_be_discarded_in_the_same_turn():
    state = play("take", DEAL)
    names = [state.action_to_string(0, a) for a in state.legal_actions()]
    assert "discard M6" not in names and {"discard S1", "discard M1", "discard O2", "discard S3"} <= set(names)
    assert json.loads(state.observation_string(1))["discard_top"] is None  # the pile is empty: draw only
    state = play("take; discard S3", DEAL)
    assert sorted(state.action_to_string(1, a) for a in state.legal_actions()) == ["draw", "take"]


def test_building_laying_on_and_going_out_score_as_the_rulebook_says():
    # player 0 draws S2? no: S2 is in player 1's hand. It draws S4 and builds nothing; player 1 draws S5 ...
    deal = DEAL + " S4 M3 O4 S5"
    # player 0: draw S4 -> S1 M1 O2 S3 S4; discards O2 (hand S1 M1 S3 S4)
    # player 1: draw M3 -> O1 S2 M2 O3 M3; discards M3 (hand O1 S2 M2 O3)
    # player 0: draws O4; cannot build; discards O4 (hand S1 M1 S3 S4)
    # player 1: takes O4 -> O1 S2 M2 O3 O4; discards M2 (hand O1 S2 O3 O4)
    state = play("draw; discard O2; draw; discard M3; draw; discard O4; take; discard M2", deal)
    assert sorted(json.loads(state.observation_string(0))["my_hand"]) == ["M1", "S1", "S3", "S4"]
    # player 0 takes M2 (hand S1 M1 S3 S4 M2): no cairn; discards M1
    state = play("draw; discard O2; draw; discard M3; draw; discard O4; take; discard M2; take; discard M1", deal)
    # player 1 draws S5 (hand O1 S2 O3 O4 S5): builds nothing, discards S5
    moves = "draw; discard O2; draw; discard M3; draw; discard O4; take; discard M2; take; discard M1; draw; discard S5"
    state = play(moves, deal)
    # player 0 takes S5 (S1 S3 S4 M2 S5): builds S3-S4-S5 (12 points), lays nothing (S2 is player 1's)
    state = play(moves + "; take; build S3-S4-S5", deal)
    assert json.loads(state.observation_string(1))["cairns"] == [{"by": "opponent", "stones": ["S3", "S4", "S5"]}]
    # its hand S1 M2 adds to 3: it may knock; player 1 may lay S2 on the row at its next turn
    assert "knock" in [state.action_to_string(0, a) for a in state.legal_actions()]
    state = play(moves + "; take; build S3-S4-S5; discard M2; draw; lay S2; discard O1", deal + " M4")
    # player 1 laid S2 (2 points) on player 0's row, which now reads S2..S5
    assert json.loads(state.observation_string(0))["cairns"] == [{"by": "me", "stones": ["S2", "S3", "S4", "S5"]}]
    # player 0 lays S1 on the same row and goes out by discarding its last stone
    state = play(moves + "; take; build S3-S4-S5; discard M2; draw; lay S2; discard O1; draw; lay S1; discard O6",
                 deal + " M4 O6")
    assert state.is_terminal() and json.loads(state.observation_string(1))["ended"] == "opponent went out"
    # player 0: built 3+4+5, laid 1, hand empty, +5 for going out = 18; player 1: laid 2, hand O3 O4 M4 = -9
    assert state.scores() == [18, 2 - (3 + 4 + 4)] and state.returns() == [27.0, -27.0]


def test_a_knock_after_play_scores_the_lower_hand():
    moves = "draw; discard O2; draw; discard M3; draw; discard O4; take; discard M2; take; discard M1; draw; discard S5"
    deal = DEAL + " S4 M3 O4 S5"
    state = play(moves + "; take; build S3-S4-S5; knock", deal)
    # the knocker holds S1 M2 (3) against O1 S2 O3 O4 (10): 12 - 3 + 3 = 12 against -10
    assert state.scores() == [12, -10] and state.returns() == [22.0, -22.0]


@pytest.mark.parametrize("drawn, scores", [
    pytest.param("O4", [15 - 5 + 3, -6], id="knocker-lower-takes-the-bonus"),
    pytest.param("O5", [15 - 6, -6 + 3], id="equal-hands-the-bonus-goes-to-the-other"),
])
def test_a_knock_on_turn_one(drawn, scores):
    """Player 0 holds S4 S5 S6 O1, player 1 S1 M1 S2 M2 (6); player 0 draws, builds the row, knocks."""
    state = play("draw; build S4-S5-S6; knock", f"S4 S1 S5 M1 S6 S2 O1 M2 O6 {drawn}")
    assert state.is_terminal() and json.loads(state.observation_string(1))["ended"] == "opponent knocked"
    assert json.loads(state.observation_string(1))["opponent_hand"] == sorted(["O1", drawn])
    assert state.scores() == scores and state.returns() == [scores[0] - scores[1], scores[1] - scores[0]]


def test_a_recorded_session_of_cairn_replays_through_cwm_synthesize(tmp_path, capsys):
    """``cwm synthesize experiments/heldout/cairn.py:cairn --llm replay:...`` loads the module game, its
    rulebook and the recording: a HAND-WRITTEN world model (tests/data/heldout, not a model's reply) is
    recorded once, then replayed by the command and checked on fresh held-out games."""
    reply = (ROOT / "tests" / "data" / "heldout" / "cairn_world_model.md").read_text(encoding="utf-8")
    recording = tmp_path / "cairn.jsonl"
    client = RecordingClient(ScriptedClient([reply], model="hand-written for a test"), recording)
    first = synthesize_world_model(SPEC, client, SynthesisSettings.of("world_model", budget=1, num_test=0),
                                   run_dir=tmp_path / "recorded")
    assert first.solved and first.llm_calls == 1
    prompt = (tmp_path / "recorded" / "calls" / "000000.prompt.md").read_text(encoding="utf-8")
    rules = prompt.split("## Rules of the game")[1].split("## The API to implement")[0]
    assert "There are eighteen stones in a bag" in rules  # the rulebook beside the module, and no schema in it
    assert offences(rules) == [] and "my_hand" not in rules and '"my_hand"' in prompt  # formats: from the games
    out = tmp_path / "replayed"
    assert main(["synthesize", SPEC, "--llm", f"replay:{recording}", "--budget", "1", "--num-test", "12",
                 "--out", str(out), "--quiet"]) == 0
    result = json.loads((out / "result.json").read_text())
    assert result["solved"] and result["test_games"] == 12 and result["test_accuracy"] == 1.0
    assert result["rules"] == "sha256:" + hashlib.sha256(MODULE.with_suffix(".md").read_bytes()).hexdigest()
