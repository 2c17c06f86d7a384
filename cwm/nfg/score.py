"""Scoring contestants' answers against the solver and reporting accuracy per family with Wilson intervals."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from statistics import mean

from cwm.nfg.answers import Reply
from cwm.nfg.game import NfgFormatError
from cwm.nfg.tasks import FAMILIES, Task
from cwm.stats import wilson  # re-exported as cwm.nfg.wilson
from cwm.types import JSON

STATUSES = ("correct", "wrong", "unparseable", "error")


@dataclasses.dataclass(frozen=True)
class ItemResult:
    """One contestant's result on one task.

    Attributes:
      task_id: the task.
      family: the task's family.
      contestant: ``"direct"`` or ``"cwm"``.
      status: ``correct``, ``wrong``, ``unparseable`` (no answer could be read from the reply, or the
        CWM route's code did not yield a game), or ``error`` (the LLM call itself failed).
      reply: the LLM's reply text (for the CWM route, the code reply).
      parsed: the structured answer that was scored, or None.
      detail: why the item is unparseable or an error; empty otherwise.
      exploitability: for a task scored by exploitability (zero-sum maximin): how much a best-responding
        opponent gains against the parsed strategy, in payoff units; None otherwise or when nothing parsed.
    """

    task_id: str
    family: str
    contestant: str
    status: str
    reply: str
    parsed: Reply | None
    detail: str = ""
    exploitability: float | None = None

    def to_json(self) -> JSON:
        return {"task_id": self.task_id, "family": self.family, "contestant": self.contestant, "status": self.status,
                "parsed": None if self.parsed is None else self.parsed.to_json(), "detail": self.detail,
                "exploitability": self.exploitability, "reply": self.reply}

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> ItemResult:
        """Reads ``to_json``'s output back (a line of ``items.jsonl``).

        Raises:
          NfgFormatError: a missing or malformed field, or an unknown status.
        """
        try:
            parsed = None if data["parsed"] is None else Reply.from_json(data["parsed"])
            measure = data.get("exploitability")
            result = cls(str(data["task_id"]), str(data["family"]), str(data["contestant"]), str(data["status"]),
                         str(data["reply"]), parsed, str(data.get("detail", "")),
                         None if measure is None else float(measure))
        except (KeyError, TypeError, ValueError) as e:
            raise NfgFormatError(f"item result: missing or malformed field {e}") from e
        if result.status not in STATUSES:
            raise NfgFormatError(f"item result: status must be one of {STATUSES}, got {result.status!r}")
        return result


def read_items(path: str | Path) -> list[ItemResult]:
    """The results in an ``items.jsonl`` file, skipping lines that cannot be read (such as a line cut short
    when a run was interrupted); an empty list when the file does not exist."""
    file = Path(path)
    if not file.exists():
        return []
    items = []
    for line in file.read_text(encoding="utf-8").splitlines():
        try:
            items.append(ItemResult.from_json(json.loads(line)))
        except (json.JSONDecodeError, NfgFormatError, AttributeError):
            continue
    return items


def judge(task: Task, contestant: str, reply: str, parsed: Reply | None, *, detail: str = "") -> ItemResult:
    """Scores a parsed answer against the task's answer key (None = unparseable)."""
    if parsed is None:
        status = "unparseable"
    else:
        status = "correct" if task.key.accepts(parsed) else "wrong"
    return ItemResult(task.id, task.family, contestant, status, reply, parsed, detail, task.key.measure(parsed))


@dataclasses.dataclass(frozen=True)
class Row:
    """Accuracy of one contestant on one family (``family == "all"`` for the total)."""

    contestant: str
    family: str
    n: int
    correct: int
    wrong: int
    unparseable: int
    error: int
    exploitability: tuple[float, ...] = ()

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0

    def to_json(self) -> JSON:
        low, high = wilson(self.correct, self.n)
        out = {**dataclasses.asdict(self), "accuracy": self.accuracy, "ci95": [low, high]}
        del out["exploitability"]
        if self.exploitability:  # families scored by exploitability: the raw numbers' summary
            out["exploitability"] = {"scored": len(self.exploitability), "mean": mean(self.exploitability),
                                     "max": max(self.exploitability)}
        return out


def summarise(results: Iterable[ItemResult]) -> list[Row]:
    """One row per (contestant, family) present, in family order, plus an ``all`` row per contestant."""
    items = list(results)
    rows = []
    for contestant in dict.fromkeys(r.contestant for r in items):
        mine = [r for r in items if r.contestant == contestant]
        for family in [*(f for f in FAMILIES if any(r.family == f for r in mine)), "all"]:
            group = [r for r in mine if family in ("all", r.family)]
            counts = {s: sum(r.status == s for r in group) for s in STATUSES}
            measures = tuple(r.exploitability for r in group if r.exploitability is not None)
            rows.append(Row(contestant, family, len(group), **counts, exploitability=measures))
    return rows


def markdown_table(rows: Sequence[Row]) -> str:
    """The summary as a markdown table (accuracy with its 95% Wilson interval)."""
    lines = ["| contestant | family | n | accuracy | 95% CI | correct | wrong | unparseable | error |",
             "|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for r in rows:
        low, high = wilson(r.correct, r.n)
        lines.append(f"| {r.contestant} | {r.family} | {r.n} | {r.accuracy:.3f} | [{low:.3f}, {high:.3f}] | "
                     f"{r.correct} | {r.wrong} | {r.unparseable} | {r.error} |")
    scored = [r for r in rows if r.exploitability]
    if scored:  # the raw exploitability of every parsed strategy, beside the thresholded accuracy above
        lines += ["", "| contestant | family | strategies scored | mean exploitability | max exploitability |",
                  "|---|---|---:|---:|---:|"]
        lines += [f"| {r.contestant} | {r.family} | {len(r.exploitability)} | {mean(r.exploitability):.4f} | "
                  f"{max(r.exploitability):.4f} |" for r in scored]
    return "\n".join(lines) + "\n"


def save_results(out_dir: str | Path, results: Sequence[ItemResult], *, record: JSON) -> dict[str, Path]:
    """Writes ``results.json`` (run record + summary), ``results.csv`` and ``results.md`` (the summary table),
    and ``items.jsonl`` (every answer), like the arena's results.

    Args:
      out_dir: the output directory (created).
      results: every item result.
      record: the run's arguments and provenance (LLM model, prompt hashes, task file, ledger).

    Returns:
      The paths written, by name.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = summarise(results)
    paths = {"json": out / "results.json", "csv": out / "results.csv", "markdown": out / "results.md",
             "items": out / "items.jsonl"}
    paths["json"].write_text(json.dumps({"record": record, "summary": [r.to_json() for r in rows]}, indent=2) + "\n",
                             encoding="utf-8")
    with paths["csv"].open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["contestant", "family", "n", "accuracy", "ci95_low", "ci95_high", *STATUSES])
        for r in rows:
            writer.writerow([r.contestant, r.family, r.n, f"{r.accuracy:.4f}",
                             *(f"{v:.4f}" for v in wilson(r.correct, r.n)), r.correct, r.wrong, r.unparseable, r.error])
    paths["markdown"].write_text(markdown_table(rows), encoding="utf-8")
    with paths["items"].open("w", encoding="utf-8") as f:
        for item in results:
            f.write(json.dumps(item.to_json()) + "\n")
    return paths
