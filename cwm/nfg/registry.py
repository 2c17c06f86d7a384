"""Exporting task sets as an OpenAI evals registry (samples JSONL, eval YAML, an eval set) and inspect_ai tasks.

Layout under the export directory::

    registry/data/nfg-<family>/samples.jsonl   one line per task: input, ideal, and our "nfg" object
    registry/evals/nfg.yaml                    one eval per family, with the match class that fits it
    registry/eval_sets/nfg.yaml                the eval set "nfg" of all of them
    inspect_tasks.py                           one inspect_ai @task per family over the same samples

The registry's string matchers cannot read a probability with a tolerance, so the classes are chosen by
answer kind: choices, labels and sequences use ``Includes`` (case-insensitive) with the ideal written as the
``Answer: ...`` line the prompt asks for; distributions use the model-graded ``fact`` check against the
solver's ideal. The inspect_ai tasks score every reply with cwm's own parser and answer key
(``cwm.nfg.inspect_task``), exactly as ``cwm nfg eval`` does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from cwm.nfg.families import get as get_family
from cwm.nfg.tasks import FAMILIES, Task
from cwm.types import JSON

PREFIX = "nfg"
INCLUDES = "evals.elsuite.basic.includes:Includes"
MODEL_GRADED = "evals.elsuite.modelgraded.classify:ModelBasedClassify"
MATCH_CLASS = {"choice": INCLUDES, "label": INCLUDES, "sequence": INCLUDES, "distribution": MODEL_GRADED}
SPLIT_VERSION = "dev.v0"


def eval_name(family: str) -> str:
    """The registry's name for a family's eval: ``nfg-best-response-pure``."""
    return f"{PREFIX}-{family.replace('_', '-')}"


def sample(task: Task) -> JSON:
    """The registry sample of a task: for an ``Includes`` eval the ideal is the answer line(s), else as is."""
    record = task.to_json()
    if MATCH_CLASS[task.key.kind] == INCLUDES:
        ideal = task.key.ideal()
        record["ideal"] = [f"Answer: {i}" for i in ideal] if isinstance(ideal, list) else f"Answer: {ideal}"
    return record


def export(tasks: Sequence[Task], out_dir: str | Path, *, seed: int) -> dict[str, Path]:
    """Writes the registry layout and the inspect_ai task file for ``tasks`` (one eval per family present).

    Args:
      tasks: the tasks (from ``generate``).
      out_dir: the export directory (created).
      seed: the generation seed (written into each eval's description).

    Returns:
      The paths written: ``"evals"`` (the eval YAML), ``"eval_set"``, ``"inspect"`` and one per eval name.
    """
    root = Path(out_dir)
    registry = root / "registry"
    families = [f for f in FAMILIES if any(t.family == f for t in tasks)]
    paths: dict[str, Path] = {}
    for family in families:
        path = registry / "data" / eval_name(family) / "samples.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(sample(t)) + "\n" for t in tasks if t.family == family), encoding="utf-8")
        paths[eval_name(family)] = path
    counts = {f: sum(t.family == f for t in tasks) for f in families}
    paths["evals"] = _write(registry / "evals" / f"{PREFIX}.yaml", _evals_yaml(families, counts, seed))
    paths["eval_set"] = _write(registry / "eval_sets" / f"{PREFIX}.yaml", _eval_set_yaml(families))
    paths["inspect"] = _write(root / "inspect_tasks.py", _inspect_file(families))
    return paths


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is valid YAML)."""
    return json.dumps(text)


def _evals_yaml(families: Sequence[str], counts: dict[str, int], seed: int) -> str:
    lines = ["# OpenAI evals registry entries written by `cwm nfg generate --registry`; every ideal is solver-computed."]
    for family in families:
        name, kind = eval_name(family), get_family(family).parse_kind
        description = f"cwm nfg {family}: {counts[family]} seeded items (seed {seed}), {kind} answers"
        lines += ["", f"{name}:", f"  id: {name}.{SPLIT_VERSION}", f"  description: {_q(description)}",
                  "  metrics: [accuracy]", f"{name}.{SPLIT_VERSION}:", f"  class: {MATCH_CLASS[kind]}", "  args:",
                  f"    samples_jsonl: {name}/samples.jsonl"]
        if MATCH_CLASS[kind] == INCLUDES:
            lines.append("    ignore_case: true")
        else:
            lines += ["    eval_type: cot_classify", "    modelgraded_spec: fact"]
    return "\n".join(lines) + "\n"


def _eval_set_yaml(families: Sequence[str]) -> str:
    names = ", ".join(eval_name(f) for f in families)
    return f"{PREFIX}:\n  evals: [{names}]\n"


def _inspect_file(families: Sequence[str]) -> str:
    head = ('"""inspect_ai tasks over the samples in registry/ (written by `cwm nfg generate --registry`).\n\n'
            "Run one with `inspect eval inspect_tasks.py@nfg_nash --model MODEL`. Replies are scored by cwm's parser\n"
            'and the solver\'s answer key in each sample (cwm.nfg.inspect_task), as `cwm nfg eval` scores them.\n"""\n\n'
            "from pathlib import Path\n\nfrom inspect_ai import Task, task\n\n"
            "from cwm.nfg.inspect_task import nfg_task\n\nHERE = Path(__file__).resolve().parent\n")
    bodies = [f"\n\n@task\ndef {eval_name(f).replace('-', '_')}() -> Task:\n"
              f'    return nfg_task(HERE / "registry" / "data" / "{eval_name(f)}" / "samples.jsonl")\n'
              for f in families]
    return head + "".join(bodies)
