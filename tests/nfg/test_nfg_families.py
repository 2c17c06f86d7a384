"""The question families: each conforms to the ``Family`` protocol, the generic modules name none of them, and
each family's seeded tasks, texts, CWM-route answers and scores hash to recorded golden digests.

tests/data/nfg/golden.json holds one SHA-256 per family over seeds ``SEEDS``, items ``0..ITEMS-1``: the task
record (formal game, question, answer key, chat messages), the question paragraph in both probability styles,
the CWM route's request and its answer from a faithful and from a sign-flipped transcription, and the scores
of fixed replies. A digest that changes means a seeded task set, a prompt or a score changed: recorded LLM
sessions would no longer replay. When that is the intent, rewrite the file with
``python tests/nfg/test_nfg_families.py`` (from the repository root) and say why in the commit.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import prompts
from cwm.nfg import (
    FAMILIES,
    MatrixGame,
    NfgFormatError,
    Task,
    contestants,
    families,
    generate,
    generator,
    registry,
    render,
    route,
    score,
    tasks,
    transcribe,
)
from cwm.nfg.families import Family
from cwm.nfg.parse import parse_reply
from cwm.nfg.score import judge
from cwm.types import JSON

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "nfg" / "golden.json"
SEEDS = (0, 1)
ITEMS = 8


def _transcribed_data(task: Task) -> dict[str, JSON]:
    """The data names a faithful transcription of ``task`` defines, written as an LLM might write them."""
    q, roles = task.question, task.question.get("roles", {})
    by_family: dict[str, dict[str, JSON]] = {
        "best_response_pure": {"OPPONENT_ACTION": q.get("opponent_action")},
        "estimate_mixed": {"OPPONENT_HISTORY": q.get("opponent_history")},
        "best_response_mixed": {"OPPONENT_MIX": {a: float(Fraction(str(p))) for a, p in q.get("opponent_mix", {}).items()}},
        "classify_partner": {"HISTORY": q.get("history"), "COOPERATE": roles.get("cooperate"),
                             "DEFECT": roles.get("defect"), "TREMBLE": 0.05},
        "play_strategy": {"STRATEGY": str(q.get("strategy")).replace("-", " ").title(),
                          "PARTNER_HISTORY": q.get("partner_history"), "COOPERATE": roles.get("cooperate"),
                          "DEFECT": roles.get("defect")},
    }
    return by_family.get(task.family, {})


def _table(task: Task, sign: int) -> dict[str, JSON]:
    game = task.game
    return {"players": list(game.players), "me": game.players[task.me], "actions": [list(a) for a in game.actions],
            "payoffs": [[[sign * float(u0), sign * float(u1)] for u0, u1 in row] for row in game.payoffs],
            "data": _transcribed_data(task)}


def _fingerprint(task: Task) -> list[JSON]:
    out: list[JSON] = [task.to_json(), route.request_text(task)]
    out += [render.question_text(task.family, task.game, task.me, task.question, probabilities=p)
            for p in ("percent", "fraction")]
    for sign in (1, -1):
        try:
            out.append(route.answer_from_table(task, _table(task, sign)).to_json())
        except route.RouteError as e:
            out.append(f"RouteError: {e}")
    ideal = task.key.ideal()
    replies = (f"Answer: {ideal if isinstance(ideal, str) else ideal[0]}", f"I would choose {task.key.vocabulary[0]}",
               "no idea", f"Answer: {', '.join(task.key.vocabulary)}")
    out += [judge(task, "direct", r, parse_reply(r, task.key)).to_json() for r in replies]
    return out


def digest(family: str) -> str:
    """The SHA-256 of ``family``'s fingerprints over ``SEEDS`` and ``ITEMS``."""
    h = hashlib.sha256()
    for seed in SEEDS:
        for task in generate([family], ITEMS, seed=seed):
            h.update(json.dumps(_fingerprint(task), sort_keys=True).encode())
    return h.hexdigest()


@pytest.fixture(scope="module")
def items() -> dict[str, list[Task]]:
    return {f: generate([f], 6, seed=11) for f in FAMILIES}


def test_the_registry_is_the_family_list_in_stream_order() -> None:
    assert families.NAMES == FAMILIES == tuple(families.REGISTRY)
    assert [families.stream(f) for f in FAMILIES] == list(range(len(FAMILIES)))
    assert all(families.get(name).name == name for name in FAMILIES)
    with pytest.raises(NfgFormatError, match=r"unknown family 'bargain'; expected one of \['best_response_pure'"):
        families.get("bargain")


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_fills_exactly_the_fields_of_its_templates(family: str, items: dict[str, list[Task]]) -> None:
    chosen = families.get(family)
    assert set(chosen.data_prompt_fields) == prompts.fields(chosen.data_prompt)
    for task in items[family]:
        for style in render.PROBABILITY_STYLES:
            fields = chosen.question_fields(task.game, task.me, task.question, style)
            assert set(fields) == prompts.fields(chosen.question_prompt), task.id


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_solves_to_keys_of_its_parse_kind(family: str, items: dict[str, list[Task]]) -> None:
    chosen = families.get(family)
    kinds = {chosen.solve(t.game, t.me, t.question).kind for t in items[family]}
    assert kinds == {chosen.parse_kind} == {t.parse_kind for t in items[family]}


@pytest.mark.parametrize("family", FAMILIES)
def test_the_route_reads_exactly_the_declared_data_names(family: str, items: dict[str, list[Task]]) -> None:
    """A faithful transcription that defines the family's data names answers correctly; leaving out any one
    of them makes the route fail (so no family reads a name it does not declare, or declares one it ignores)."""
    names = families.get(family).data_names
    for task in items[family]:
        table = _table(task, 1)
        assert set(table["data"]) == set(names), task.id
        assert task.key.accepts(route.answer_from_table(task, table)), task.id
        for name in names:
            partial = {**table, "data": {k: v for k, v in table["data"].items() if k != name}}
            with pytest.raises(route.RouteError):
                route.answer_from_table(task, partial)


def test_a_family_with_an_unknown_parse_kind_is_refused() -> None:
    nash = families.get("nash")
    with pytest.raises(NfgFormatError, match="parse kind must be one of"):
        Family("guess", "number", nash.question_fields, nash.solve, nash.generate)


@pytest.mark.parametrize("module", [render, tasks, generator, route, score, contestants, registry, transcribe],
                         ids=lambda m: m.__name__)
def test_the_generic_modules_name_no_family(module: object) -> None:
    """Per-family behaviour lives in cwm.nfg.families: a family's name as a string in a generic module would be
    a branch on it."""
    literals = {n.value for n in ast.walk(ast.parse(inspect.getsource(module)))  # type: ignore[arg-type]
                if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not literals & set(FAMILIES)
    assert not [s for s in literals if any(f"{f}." in s or f"/{f}" in s for f in FAMILIES)]


def test_an_unknown_family_is_named_by_every_entry_point() -> None:
    game = MatrixGame.from_tables(["A", "B"], [["red", "blue"]] * 2, [[1, 0], [0, 1]], [[0, 1], [1, 0]])
    for call in (lambda: tasks.solve("bargain", game, 0, {}), lambda: render.question_text("bargain", game, 0, {}),
                 lambda: generator.generate_one("bargain", 0)):
        with pytest.raises(NfgFormatError, match="unknown family 'bargain'"):
            call()


@pytest.mark.parametrize("family", FAMILIES)
def test_seeded_outputs_match_the_golden_digest(family: str) -> None:
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert (recorded["seeds"], recorded["items"]) == (list(SEEDS), ITEMS)
    assert digest(family) == recorded["digests"][family], f"{family}: seeded outputs changed (see module docstring)"


def test_every_family_has_a_golden_digest() -> None:
    assert sorted(json.loads(GOLDEN.read_text(encoding="utf-8"))["digests"]) == sorted(FAMILIES)


if __name__ == "__main__":
    digests = {f: digest(f) for f in FAMILIES}
    GOLDEN.write_text(json.dumps({"seeds": list(SEEDS), "items": ITEMS, "digests": digests}, indent=2) + "\n",
                      encoding="utf-8")
    print(f"wrote {len(digests)} digests to {GOLDEN}", file=sys.stderr)
