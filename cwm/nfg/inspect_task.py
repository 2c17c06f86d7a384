"""The inspect_ai side of the registry export: a task over an exported samples file, scored by cwm's parser.

inspect_ai is imported only when a task or its scorer is built, so this module (and its pure parts,
``record_to_fields`` and ``score_text``, which the tests exercise) imports without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cwm.nfg.answers import AnswerKey, Reply
from cwm.nfg.parse import parse_reply
from cwm.types import JSON


def record_to_fields(record: Mapping[str, JSON]) -> dict[str, Any]:
    """The fields of an inspect ``Sample`` for one exported line: input messages, target, id and the ``nfg``
    object as metadata (messages stay ``{"role", "content"}`` dicts; ``nfg_task`` makes them chat messages)."""
    nfg = record["nfg"]
    return {"input": [dict(m) for m in record["input"]], "target": record["ideal"], "id": nfg["id"],
            "metadata": {"nfg": nfg}}


def score_text(nfg: Mapping[str, JSON], text: str) -> tuple[str, Reply | None, float | None]:
    """Scores a completion against the answer key in a sample's ``nfg`` object.

    Returns:
      ``(status, parsed, exploitability)``: status is ``correct``, ``wrong`` or ``unparseable``;
      exploitability is set for keys scored by it (zero-sum maximin).
    """
    key = AnswerKey.from_json(nfg["answer"])
    parsed = parse_reply(text, key)
    if parsed is None:
        return "unparseable", None, None
    return ("correct" if key.accepts(parsed) else "wrong"), parsed, key.measure(parsed)


def nfg_task(samples: str | Path) -> Any:
    """An inspect_ai ``Task``: the samples file as its dataset, one generation per sample, cwm's scorer."""
    from inspect_ai import Task  # inspect_ai is an optional dependency
    from inspect_ai.dataset import Sample, json_dataset
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser
    from inspect_ai.solver import generate

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser}

    def to_sample(record: dict[str, Any]) -> Any:
        fields = record_to_fields(record)
        fields["input"] = [kinds[m["role"]](content=m["content"]) for m in fields["input"]]
        return Sample(**fields)

    return Task(dataset=json_dataset(str(samples), sample_fields=to_sample), solver=[generate()], scorer=nfg_scorer())


def nfg_scorer() -> Any:
    """An inspect_ai scorer: CORRECT when cwm's parser reads an accepted answer from the completion."""
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer, stderr  # optional dependency

    @scorer(metrics=[accuracy(), stderr()], name="nfg_answer")
    def nfg_answer() -> Any:
        async def score(state: Any, target: Any) -> Any:
            status, parsed, measure = score_text(state.metadata["nfg"], state.output.completion)
            return Score(value=CORRECT if status == "correct" else INCORRECT,
                         answer=None if parsed is None else str(parsed.to_json()["value"]), explanation=status,
                         metadata={"status": status, "exploitability": measure})

        return score

    return nfg_answer()
