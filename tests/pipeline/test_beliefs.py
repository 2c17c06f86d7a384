"""The posterior check on the information states an agent met in the arena (``cwm.pipeline.beliefs``): states
read off recorded matches, the untrusted inference drawn in hardened workers, each opponent's states apart.
The inference functions are the hand-written Leduc reference fixture and its point-mass mutant."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
from pathlib import Path

import pytest

from cwm import games
from cwm.arena.types import MatchResult
from cwm.checks.posterior import PosteriorSettings
from cwm.pipeline import beliefs, posterior_lines, stages
from cwm.pipeline.beliefs import agent_states, posterior_record, well_formed
from cwm.pipeline.on_policy import ReplayError
from tests.pipeline.test_on_policy import _matches

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"
SMALL = PosteriorSettings(games_played=3, states=4, draws=150, seed=0)


def _mutant(name: str) -> str:
    spec = importlib.util.spec_from_file_location("leduc_mutants", REFERENCE / "leduc_poker_inference_mutants.py")
    mutants = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mutants)
    return mutants.source(name)


def test_the_states_are_those_where_the_agent_was_to_move_in_its_finished_matches():
    good = _matches("leduc_poker", 4, seats=("cwm", "random"))
    forfeit = MatchResult("f#0", ("cwm", "gt-ismcts"), 0, (-1.0, 1.0), forfeit_seat=0, forfeit_kind="illegal",
                          actions=good[0].actions[:3])
    states, opponents = agent_states("leduc_poker", [*good, forfeit], "cwm")
    assert opponents == ["random"] * 4
    for number, state in states:
        seat = good[number].seats.index("cwm")
        assert state.current_player() == seat and not state.is_chance_node()
        assert tuple(state.history()) == good[number].actions[:len(state.history())]  # a prefix of its match
    moves = sum(1 for r in good for k in range(len(r.actions)) if _mover(r, k) == r.seats.index("cwm"))
    assert len(states) == moves > 8


def _mover(result: MatchResult, k: int) -> int:
    from cwm import games

    state = games.load_game("leduc_poker").new_initial_state()
    for a in result.actions[:k]:
        state.apply_action(a)
    return -1 if state.is_chance_node() else state.current_player()


def test_a_damaged_record_is_refused_naming_the_match():
    result = _matches("leduc_poker", 1)[0]
    damaged = MatchResult(result.key, result.seats, 0, result.returns, actions=(result.actions[0],) * 3)
    with pytest.raises(ReplayError, match=r"m#0: recorded action 1 .* not legal"):
        agent_states("leduc_poker", [damaged], "cwm")



@pytest.mark.parametrize("cut,words", [(-1, "does not end after its"), (+1, "ends after")])
def test_a_record_whose_actions_stop_before_or_go_past_the_end_is_refused(cut, words):
    result = _matches("leduc_poker", 1)[0]
    actions = result.actions[:-1] if cut < 0 else (*result.actions, result.actions[-1])
    damaged = MatchResult(result.key, result.seats, 0, result.returns, actions=actions)
    with pytest.raises(ReplayError, match=rf"m#0: the game {words}"):
        agent_states("leduc_poker", [damaged], "cwm")

@pytest.fixture(scope="module")
def matches():
    return [*_matches("leduc_poker", 6, seats=("cwm", "random")), *_matches("leduc_poker", 6, seats=("gt-ismcts", "cwm"))]


def test_the_reference_belief_passes_on_and_off_policy_and_each_opponent_is_apart(matches):
    record = posterior_record((REFERENCE / "leduc_poker_inference.py").read_text(), "leduc_poker", matches, "cwm", SMALL)
    on, off = record["on_policy"], record["off_policy"]
    assert on["where"] == "on-policy" and off["where"] == "off-policy" and record["matches"] == 12
    assert len(on["states"]) == 4 and on["accuracy"] == 1.0 and on["lo"] == 0.0 and off["lo"] == 0.0
    assert 0 < on["detectable"] < 1 and all(s["draws"] == 150 for s in on["states"])
    rows = record["by_opponent"]
    assert sum(r["states"] for r in rows.values()) == 4 and set(rows) <= {"random", "gt-ismcts"}
    assert all(r["model_is_its_policy"] == (name == "random") for name, r in rows.items())
    lines = posterior_lines(record)
    on_line = next(line for line in lines if line.startswith("- on-policy"))
    assert f"over 4 states ({4 * 150:,} draws); detectable {on['detectable']:.3f}" in on_line
    assert "no wrong belief shown" in on_line and "at 95% confidence" in on_line
    assert json.loads(json.dumps(record)) and posterior_lines(json.loads(json.dumps(record))) == lines


def test_a_point_mass_belief_is_shown_wrong_where_the_agent_plays(matches):
    record = posterior_record(_mutant("always_same_deal"), "leduc_poker", matches, "cwm", SMALL)
    assert record["on_policy"]["accuracy"] == 1.0 and record["on_policy"]["lo"] > 0.3
    assert any(line.startswith("- on-policy") and "shown wrong" in line for line in posterior_lines(record))


def test_no_finished_match_gives_no_on_policy_figure():
    record = posterior_record((REFERENCE / "leduc_poker_inference.py").read_text(), "leduc_poker", [], "cwm", SMALL)
    assert record["on_policy"] is None and record["matches"] == 0 and "by_opponent" not in record
    assert "- on-policy (states the CWM agent met in the arena): no finished match" in posterior_lines(record)


@pytest.fixture(scope="module")
def reference_record(matches):  # as posterior.json holds it
    return _as_json(posterior_record((REFERENCE / "leduc_poker_inference.py").read_text(), "leduc_poker", matches, "cwm", SMALL))


def _as_json(record):
    return json.loads(json.dumps(record))


@pytest.mark.parametrize("where,key,bad", [
    ("state", "draws", math.nan), ("state", "draws", "x"), ("state", "draws", [1]), ("state", "draws", 10 ** 400),
    ("on_policy", "tv", 10 ** 400), ("on_policy", "lo", "0.5"), ("on_policy", "confidence", math.inf),
    ("row", "tv", 10 ** 400), ("row", "detectable", {"a": 1})])
def test_a_damaged_posterior_record_prints_na_where_it_is_damaged_and_is_not_well_formed(reference_record, where,
                                                                                        key, bad):
    record = copy.deepcopy(reference_record)
    target = {"state": record["on_policy"]["states"][0], "on_policy": record["on_policy"],
              "row": next(iter(record["by_opponent"].values()))}[where]
    target[key] = bad
    assert well_formed(reference_record) and not well_formed(record)
    lines = posterior_lines(record)  # and no crash
    good = posterior_lines(reference_record)
    changed = [line for line, before in zip(lines, good, strict=True) if line != before]
    shown = {"draws": "draws)", "confidence": "at the stated confidence"}.get(key, "n/a")  # what replaces it
    assert len(changed) == 1 and shown in changed[0], changed


def _run_posterior(tmp_path, matches, monkeypatch):
    monkeypatch.setattr(beliefs, "run_settings", lambda seed: SMALL)
    bundle = tmp_path / "bundle"
    bundle.mkdir(exist_ok=True)
    (bundle / "inference.py").write_text((REFERENCE / "leduc_poker_inference.py").read_text(), encoding="utf-8")
    return stages._posterior(games.resolve("leduc_poker"), bundle, matches, tmp_path / "posterior.json", 0)


@pytest.mark.parametrize("damage", ["truncated", "not utf-8", "wrong shape", "huge tv"])
def test_a_damaged_posterior_file_is_checked_again_and_rewritten_whole(tmp_path, matches, reference_record,
                                                                         monkeypatch, damage):
    out = tmp_path / "posterior.json"
    text = json.dumps(reference_record, indent=2)
    out.write_bytes({"truncated": text[:len(text) // 2].encode(), "not utf-8": b"\xff\xfe{",
                     "wrong shape": json.dumps({**reference_record, "off_policy": [1]}).encode(),
                     "huge tv": json.dumps({**reference_record, "off_policy": {**reference_record["off_policy"],
                                                                               "tv": 10 ** 400}}).encode()}[damage])
    record = _run_posterior(tmp_path, matches, monkeypatch)
    assert _as_json(record) == reference_record and json.loads(out.read_text()) == reference_record
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "posterior.json"]  # no temporary file left
    monkeypatch.setattr(beliefs, "posterior_record", lambda *a: pytest.fail("a sound file is checked again"))
    assert _run_posterior(tmp_path, matches, monkeypatch) == reference_record  # resumed from the file
