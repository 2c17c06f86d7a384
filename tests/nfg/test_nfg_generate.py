"""The generator: seeded and reproducible, every family present, disguises vary, ideals agree with the solver."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from cwm.nfg import FAMILIES, audit_record, generate, generate_one, load, save
from cwm.nfg.parse import parse_reply
from cwm.nfg.tasks import PARSE_KIND, Task


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return generate(FAMILIES, 20, seed=0)


def _digest(items: list[Task]) -> str:
    return hashlib.sha256("\n".join(json.dumps(t.to_json(), sort_keys=True) for t in items).encode()).hexdigest()


def test_same_seed_same_tasks_and_other_seed_differs(tasks: list[Task]) -> None:
    assert _digest(generate(FAMILIES, 20, seed=0)) == _digest(tasks)
    assert _digest(generate(FAMILIES, 20, seed=1)) != _digest(tasks)


def test_an_item_does_not_depend_on_what_else_was_generated(tasks: list[Task]) -> None:
    alone = generate_one("nash", 3, seed=0)
    assert alone.to_json() == next(t for t in tasks if t.id == "nash-0-3").to_json()


def test_counts_ids_and_parse_kinds(tasks: list[Task]) -> None:
    assert Counter(t.family for t in tasks) == dict.fromkeys(FAMILIES, 20)
    assert len({t.id for t in tasks}) == len(tasks)
    assert all(t.parse_kind == PARSE_KIND[t.family] for t in tasks)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_ideal_is_recomputed_the_same_by_the_audit(tasks: list[Task], family: str) -> None:
    for task in (t for t in tasks if t.family == family):
        finding = audit_record(task.to_json())
        assert finding.status == "ok", (task.id, finding.reasons)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_ideal_parses_back_as_a_correct_reply(tasks: list[Task], family: str) -> None:
    for task in (t for t in tasks if t.family == family):
        ideals = task.key.ideal()
        for ideal in [ideals] if isinstance(ideals, str) else ideals:
            assert task.key.accepts(parse_reply(f"Answer: {ideal}", task.key)), (task.id, ideal)


def test_disguises_and_viewpoints_vary(tasks: list[Task]) -> None:
    assert {t.disguise["style"] for t in tasks} == {"colours", "numbers", "projects"}
    assert {t.game.unit for t in tasks} == {"points", "dollars"}
    assert {t.me for t in tasks} == {0, 1}
    assert any("$" in t.user_text for t in tasks) and any(" points" in t.user_text for t in tasks)
    assert any("project " in t.user_text for t in tasks)


def test_mixed_best_responses_are_usually_pure_and_classification_covers_ambiguous() -> None:
    many = generate(["best_response_mixed", "classify_partner"], 60, seed=3)
    sizes = Counter(len(t.key.accepted) for t in many if t.family == "best_response_mixed")
    assert sizes[1] > 40
    labels = {t.key.ideal() for t in many if t.family == "classify_partner"}
    assert {"always-cooperate", "always-defect", "tit-for-tat", "grim-trigger", "random", "ambiguous"} <= labels


def test_the_text_states_the_question_facts(tasks: list[Task]) -> None:
    task = next(t for t in tasks if t.family == "estimate_mixed")
    assert ", ".join(task.question["opponent_history"]) in task.user_text
    task = next(t for t in tasks if t.family == "play_strategy")
    assert ", ".join(task.question["partner_history"]) in task.user_text
    assert task.game.players[task.me] in task.user_text


def test_save_and_load_round_trip_and_the_evals_format(tmp_path: Path, tasks: list[Task]) -> None:
    ours = save(tmp_path / "tasks.jsonl", tasks[:10])
    assert [t.to_json() for t in load(ours)] == [t.to_json() for t in tasks[:10]]
    plain = save(tmp_path / "evals.jsonl", tasks[:10], evals_only=True)
    first = json.loads(plain.read_text().splitlines()[0])
    assert set(first) == {"input", "ideal"}
    assert [m["role"] for m in first["input"]] == ["system", "user"]
    assert all(isinstance(m["content"], str) and m["content"] for m in first["input"])


def test_unknown_family_is_named() -> None:
    with pytest.raises(ValueError, match="unknown families \\['bargain'\\]"):
        generate(["bargain"], 1)


@pytest.mark.parametrize(("family", "question"), [("best_response_pure", {"opponent_action": "red"}),
                                                 ("best_response_mixed", {"opponent_mix": {"red": "3/4", "blue": "1/4"}})])
def test_tie_wording_matches_scoring(family: str, question: dict) -> None:
    from cwm.nfg import MatrixGame, render, solve

    game = MatrixGame.from_tables(["Ana", "Ben"], [["red", "blue", "green"], ["red", "blue"]],
                                  [[2, 0], [2, 0], [0, 1]], [[0, 0], [0, 0], [0, 0]])
    key = solve(family, game, 0, question)
    assert set(key.accepted) == {"red", "blue"}
    disguise = {"style": "colours", "unit": "points", "probabilities": "fractions"}
    text = render.messages(family, game, 0, question, key, disguise=disguise)[-1]["content"]
    assert "name any one of them" in text and "all of them" not in text
    assert key.accepts(parse_reply("Answer: blue", key))  # one tied action is what the text asks for
    assert key.accepts(parse_reply("Answer: red, blue", key))  # and several are correct too


def test_numbers_style_never_names_people_player_n() -> None:
    many = generate(FAMILIES, 30, seed=0)
    numbers = [t for t in many if t.disguise["style"] == "numbers"]
    assert numbers
    assert not [t.id for t in numbers if any(p.startswith("Player ") for p in t.game.players)]
    assert any(p.startswith("Player ") for t in many if t.disguise["style"] == "colours" for p in t.game.players)
