"""JAX-twin synthesis (cwm.synthesis.jax_synthesis) through a recorded session hand-written for this test
(tests/data/twins/jax_session: its provenance says so): the first JAX twin scores a win by o wrongly, the
refinement prompt shows the first diverging step through the JAX twin's own function names, the second twin
passes the JAX equivalence check and is saved in the bundle as jax_twin.py with its evidence; and the command
line runs the same session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm import bundle
from cwm.cli import main
from cwm.codec import ActionCodec
from cwm.games import action_codec, resolve, trajectories
from cwm.llm.base import ScriptedClient
from cwm.llm.replay import ReplayClient
from cwm.sandbox.equivalence import EquivalenceSettings
from cwm.synthesis.jax_synthesis import synthesize_jax
from cwm.synthesis.jax_target import CODEC_ROWS, codec_table
from cwm.synthesis.settings import SynthesisSettings
from cwm.types import UsageError

ROOT = Path(__file__).resolve().parents[1]
SESSION = ROOT / "data" / "twins" / "jax_session"
MODEL = (ROOT / "data" / "reference" / "tic_tac_toe_model.py").read_text(encoding="utf-8")
TWIN = (ROOT / "fixtures" / "jax_twins" / "ttt_reference.py").read_text(encoding="utf-8")
EQUIVALENCE = EquivalenceSettings(p=0.2, delta=0.05, simulations=10)


@pytest.fixture()
def model_bundle(tmp_path: Path) -> Path:
    return bundle.export_bundle(tmp_path / "b", game="tic_tac_toe", model_source=MODEL,
                                train=trajectories.collect("tic_tac_toe", 3, seed=0))


def test_the_recorded_session_refines_a_wrong_jax_twin_and_saves_the_right_one(model_bundle: Path,
                                                                               tmp_path: Path) -> None:
    assert "hand-written for a test" in json.loads((SESSION / "provenance.json").read_text())["answered_by"]
    llm = ReplayClient(SESSION / "tic_tac_toe.jsonl")
    result = synthesize_jax("tic_tac_toe", llm, SynthesisSettings.of("jax", budget=3), run_dir=tmp_path / "run",
                            bundle=model_bundle, equivalence=EQUIVALENCE)
    assert result.synthesis.solved and result.synthesis.llm_calls == 2 and result.twin == TWIN
    assert result.evidence is not None and result.evidence["verdict"] == "equivalent"
    loaded = bundle.load_bundle(model_bundle)
    assert loaded.jax_twin == TWIN and loaded.jax_twin_evidence == result.evidence
    initial, refine = [json.loads(line)["request"]["messages"][-1]["text"] for line in
                       (SESSION / "tic_tac_toe.jsonl").read_text().splitlines()]
    assert "def legal_mask(state: State) -> bool[NUM_DISTINCT_ACTIONS]" in initial
    assert "| player 0 | `x(1,1)` | 4 |" in initial and "NUM_DISTINCT_ACTIONS = 9" in initial
    assert "jax.lax, jax.numpy, jax.random, math" in initial
    assert "[rewards] game " in refine and "rewards(state) (the move that led here)" in refine
    assert "expected: [-1.0, 1.0]" in refine and "got:      [-1.0, 0.5]" in refine


def test_no_jax_twin_is_saved_when_none_passes(model_bundle: Path, tmp_path: Path) -> None:
    wrong = TWIN.replace("return (state[\"board\"] == 0) & ~_over(state)", "return state[\"board\"] == 0")
    assert wrong != TWIN
    before = (model_bundle / "manifest.json").read_bytes()
    result = synthesize_jax("tic_tac_toe", ScriptedClient([f"```python\n{wrong}```\n"], model="scripted"),
                            SynthesisSettings.of("jax", budget=1), run_dir=tmp_path / "run", bundle=model_bundle,
                            equivalence=EQUIVALENCE)
    assert not result.synthesis.solved and result.twin is None
    assert (model_bundle / "manifest.json").read_bytes() == before
    assert not (model_bundle / "jax_twin.py").exists()


def test_isolation_cannot_be_turned_off(model_bundle: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="isolate cannot be turned off"):
        synthesize_jax("tic_tac_toe", ScriptedClient([]), SynthesisSettings.of("jax", isolate=False),
                       run_dir=tmp_path / "run", bundle=model_bundle)
    assert not (tmp_path / "run").exists()


def test_the_codec_table_lists_every_id_of_the_game() -> None:
    table = codec_table(action_codec(resolve("tic_tac_toe"))).splitlines()
    assert len(table) == 2 + 18  # nine cells for each player
    assert "| player 1 | `o(2,2)` | 8 |" in table


def test_a_table_too_long_for_the_prompt_cuts_player_actions_and_keeps_every_chance_outcome() -> None:
    """Backgammon's codec holds thousands of move strings (one id has several: the rest of the string depends
    on the dice) and every roll: the table keeps every chance outcome, cuts player actions to fit, says how
    many rows it left out, and says that the twin is compared by ids."""
    codec = action_codec(resolve("backgammon"))
    table = codec_table(codec).splitlines()
    chance = [line for line in table if line.startswith("| chance |")]
    assert {int(line.rsplit("|", 2)[1]) for line in chance} == set(range(codec.max_chance_outcomes))
    cut = [line for line in table if line.startswith("| ... |")]
    assert len(cut) == 1 and "more rows of player actions" in cut[0]
    assert sum(line.startswith(("| player", "| chance")) for line in table) == CODEC_ROWS
    assert "compared with the model by ids" in table[-1]
    many = ActionCodec({**{(0, f"a{i}"): i for i in range(3)}, **{(-1, f"roll {i}"): i for i in range(CODEC_ROWS + 10)}},
                       num_distinct_actions=3, max_chance_outcomes=CODEC_ROWS + 10)
    lines = codec_table(many).splitlines()  # more outcomes than rows: cut too, and said
    assert sum(line.startswith("| chance |") for line in lines) == CODEC_ROWS
    assert "| ... | 3 more rows of player actions | |" in lines and "| ... | 10 more rows of chance outcomes | |" in lines


def test_the_command_line_replays_the_session(model_bundle: Path, tmp_path: Path, capsys) -> None:
    code = main(["synthesize", "tic_tac_toe", "--target", "jax", "--from", str(model_bundle), "--llm",
                 f"replay:{SESSION / 'tic_tac_toe.jsonl'}", "--out", str(tmp_path / "run"), "--budget", "3",
                 "--detect-rate", "0.2", "--miss-probability", "0.05", "--playout-simulations", "10", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "tic_tac_toe (JAX twin): a twin passed the equivalence check after 2 LLM calls" in out
    assert (model_bundle / "jax_twin.py").read_text() == TWIN


def test_a_twin_asked_with_an_encoder_sees_it_whole_and_one_without_is_told_tensors_are_not_compared() -> None:
    from cwm.synthesis.jax_target import jax_target

    encoder = (ROOT / "data" / "reference" / "tic_tac_toe_encoder.py").read_text(encoding="utf-8")
    codec = action_codec(resolve("tic_tac_toe"))
    asked = {name: jax_target("# Tic-tac-toe\n", MODEL, codec, num_players=2, check=lambda source: None,
                              encoder=given).render("initial") for name, given in (("with", encoder), ("without", None))}
    assert encoder.rstrip() in asked["with"] and "encode(observation(state, player), player)" in asked["with"]
    assert "not compared" not in asked["with"]
    assert encoder.rstrip() not in asked["without"] and "`observation_tensor` is not compared" in asked["without"]
