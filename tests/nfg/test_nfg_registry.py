"""The registry export: OpenAI evals layout and eval YAML, checked against the registry's documented schema, and
the inspect_ai task file, checked against inspect's documented task structure.

Neither package is installed for the tests: `evals` pulls in about 4 GB of dependencies and `inspect_ai` 59
packages here. The schema below is the registry's README ("an eval name maps to an id, a description and
metrics; the id maps to a class and its args; samples_jsonl is relative to registry/data"), and the match test
uses the Includes class's documented rule: a sample passes when any ideal occurs in the completion.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import yaml

from cwm.cli import main
from cwm.nfg import FAMILIES, generate
from cwm.nfg.inspect_task import record_to_fields, score_text
from cwm.nfg.parse import parse_reply
from cwm.nfg.registry import INCLUDES, MODEL_GRADED, eval_name
from cwm.nfg.tasks import LABELS

# The registry's built-in classes this export may name, with the args each one takes.
DOCUMENTED_CLASSES = {
    INCLUDES: {"samples_jsonl", "ignore_case"},
    MODEL_GRADED: {"samples_jsonl", "eval_type", "modelgraded_spec"},
}
NAMES = [eval_name(f) for f in FAMILIES]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export")
    assert main(["nfg", "generate", "--families", "all", "--n", "3", "--seed", "2", "--registry", str(out)]) == 0
    return out


def _samples(exported: Path, name: str) -> list[dict]:
    path = exported / "registry" / "data" / name / "samples.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_eval_yaml_follows_the_registry_schema(exported: Path) -> None:
    evals = yaml.safe_load((exported / "registry" / "evals" / "nfg.yaml").read_text())
    assert set(evals) == set(NAMES) | {f"{n}.dev.v0" for n in NAMES}
    for name in NAMES:
        head = evals[name]
        assert set(head) == {"id", "description", "metrics"} and head["metrics"] == ["accuracy"]
        spec = evals[head["id"]]
        assert head["id"].split(".")[0] == name and len(head["id"].split(".")) == 3
        assert spec["class"] in DOCUMENTED_CLASSES and set(spec["args"]) <= DOCUMENTED_CLASSES[spec["class"]]
        assert (exported / "registry" / "data" / spec["args"]["samples_jsonl"]).is_file()
        if spec["class"] == MODEL_GRADED:
            assert spec["args"]["eval_type"] == "cot_classify" and spec["args"]["modelgraded_spec"] == "fact"
    sets = yaml.safe_load((exported / "registry" / "eval_sets" / "nfg.yaml").read_text())
    assert sets == {"nfg": {"evals": NAMES}}


def test_every_sample_is_an_evals_record(exported: Path) -> None:
    for name in NAMES:
        samples = _samples(exported, name)
        assert len(samples) == 3
        for s in samples:
            assert [m["role"] for m in s["input"]] == ["system", "user"]
            assert all(isinstance(m["content"], str) and m["content"] for m in s["input"])
            ideals = s["ideal"] if isinstance(s["ideal"], list) else [s["ideal"]]
            assert ideals and all(isinstance(i, str) for i in ideals)


def _includes(completion: str, ideal: str | list[str]) -> bool:
    """The Includes rule (ignore_case): any ideal occurs in the completion."""
    return any(i.lower() in completion.lower() for i in (ideal if isinstance(ideal, list) else [ideal]))


def _wrong_answer(kind: str, vocabulary: list[str], accepted: list) -> str:
    if kind == "sequence":
        first = next(a for a in vocabulary if a != accepted[0][0])
        return ", ".join([first, *accepted[0][1:]])
    return next(a for a in vocabulary if a not in accepted)


@pytest.mark.parametrize("family", [f for f in FAMILIES if f not in ("estimate_mixed", "nash", "nash_3x3",
                                                                      "zero_sum_maximin")])
def test_includes_passes_a_correct_reply_and_fails_a_wrong_one(exported: Path, family: str) -> None:
    for s in _samples(exported, eval_name(family)):
        key = s["nfg"]["answer"]
        right = s["ideal"] if isinstance(s["ideal"], str) else s["ideal"][-1]
        assert _includes(f"Thinking it through step by step.\n{right}", s["ideal"])
        wrong = _wrong_answer(key["kind"], key["vocabulary"] if key["kind"] != "label" else list(LABELS),
                              key["accepted"])
        assert not _includes(f"Thinking it through step by step.\nAnswer: {wrong}", s["ideal"]), s["nfg"]["id"]


@pytest.mark.parametrize("family", ["estimate_mixed", "nash", "nash_3x3", "zero_sum_maximin"])
def test_model_graded_samples_carry_the_solver_ideal(exported: Path, family: str) -> None:
    for s in _samples(exported, eval_name(family)):
        status, _, _ = score_text(s["nfg"], f"Answer: {s['ideal']}")
        assert status == "correct" and not s["ideal"].startswith("Answer:")


def test_the_inspect_file_defines_one_task_per_set(exported: Path) -> None:
    source = (exported / "inspect_tasks.py").read_text()
    tree = ast.parse(source)
    compile(tree, "inspect_tasks.py", "exec")
    imports = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imports == {"pathlib", "inspect_ai", "cwm.nfg.inspect_task"}
    tasks = [f for f in tree.body if isinstance(f, ast.FunctionDef)]
    assert [f.name for f in tasks] == [n.replace("-", "_") for n in NAMES]
    for function in tasks:
        assert [ast.unparse(d) for d in function.decorator_list] == ["task"]
        (statement,) = function.body
        assert isinstance(statement, ast.Return) and isinstance(statement.value, ast.Call)
        assert ast.unparse(statement.value.func) == "nfg_task"
        constants = sorted((a for a in ast.walk(statement.value) if isinstance(a, ast.Constant)), key=lambda a: a.col_offset)
        parts = [a.value for a in constants]
        assert (exported.joinpath(*parts)).is_file() and parts[2] == function.name.replace("_", "-")


def test_inspect_samples_and_scores_use_cwms_parser(exported: Path) -> None:
    (record, *_) = _samples(exported, "nfg-zero-sum-maximin")
    fields = record_to_fields(record)
    assert fields["id"] == record["nfg"]["id"] and fields["target"] == record["ideal"]
    assert [m["role"] for m in fields["input"]] == ["system", "user"] and fields["metadata"]["nfg"] == record["nfg"]
    status, parsed, measure = score_text(record["nfg"], "Some working.\nAnswer: " + record["ideal"])
    assert status == "correct" and parsed is not None and measure is not None and measure < 0.01
    pure = record["nfg"]["answer"]["vocabulary"][0]
    status, _, measure = score_text(record["nfg"], f"Answer: {pure}")
    assert status == "wrong" and measure is not None and measure > record["nfg"]["answer"]["exploitability"]["threshold"]
    assert score_text(record["nfg"], "I do not know.") == ("unparseable", None, None)


def test_the_samples_are_the_generated_tasks(exported: Path) -> None:
    tasks = generate(["play_strategy"], 3, seed=2)
    samples = _samples(exported, "nfg-play-strategy")
    assert [s["nfg"]["id"] for s in samples] == [t.id for t in tasks]
    assert all(parse_reply(s["ideal"], t.key) == parse_reply(f"Answer: {t.key.ideal()}", t.key)
               for s, t in zip(samples, tasks))


def test_generate_with_nothing_to_write_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nfg", "generate", "--families", "nash", "--n", "1"]) == 2
    err = capsys.readouterr().err
    assert "nothing to write" in err and len(err.strip().splitlines()) == 1
