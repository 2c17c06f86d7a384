"""What every target's run does around the refinement loop: its store (the resume key ``config.json`` and the
settings it ran with, ``settings.json``), the training and held-out games saved once and reloaded, the held-out
report of the best program, and the run's ``SynthesisResult``."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cwm.files import RUN_FILE_BYTES, loads_bounded, read_bounded
from cwm.games import trajectories
from cwm.sandbox import Sandbox
from cwm.sandbox.checkers import Checker
from cwm.synthesis.engine import Engine
from cwm.synthesis.report import failures_by_branch
from cwm.synthesis.settings import SynthesisSettings
from cwm.synthesis.store import RunStore, sha
from cwm.synthesis.types import SynthesisResult
from cwm.types import JSON, CheckReport, Trajectory


def open_store(root: Path, config: dict[str, JSON], settings: SynthesisSettings, *, check_key: str) -> RunStore:
    """The run's store (``ResumeError`` when ``root`` holds a run with another ``config``), with the settings the
    run goes on with written whole as ``settings.json``."""
    store = RunStore(root, config=config, check_key=check_key)
    store.write_json("settings.json", settings.to_json())
    return store


def games_key(items: list[Any], extra: str = "") -> str:
    """The fingerprint of what candidates are checked against: the games (or views) as canonical JSON, and
    ``extra`` (a world model's source the checks run in)."""
    return sha(json.dumps([trajectories.to_json(t) for t in items], sort_keys=True) + extra)


def load_or_save(path: Path, make: Any) -> list[Trajectory]:
    if path.is_file():
        return trajectories.load_open(path)
    items = trajectories.share_tables(list(make()))  # a long chance table once in memory and in the file
    trajectories.save(path, items, shared=True)
    return items


@contextlib.contextmanager
def sandbox_or_none(isolate: bool) -> Iterator[Any]:
    """A ``Sandbox`` for the checks (closed afterwards), or ``None`` when ``isolate`` is off."""
    if not isolate:
        yield None
        return
    box = Sandbox()
    try:
        yield box
    finally:
        box.close()


def test_report(engine: Engine, store: RunStore, check: Checker) -> CheckReport | None:
    best = engine.best
    if best is None:
        return None
    path = store.root / "test_report.json"
    key = sha(best.source)
    if path.is_file():
        data = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="run file"), where=str(path))
        if isinstance(data, dict) and data.get("source_sha") == key:
            return CheckReport.from_json(data["report"])
    report = check(best.source)
    store.write_json("test_report.json", {"source_sha": key, "node": best.id, "report": report.to_json()})
    return report


def result_of(engine: Engine, store: RunStore, config: dict[str, Any], test_report: CheckReport | None,
              wall: float, *, test_games: int | None = None, rules: str = "") -> SynthesisResult:
    """The run's result; ``test_games`` is how many held-out games ``test_report`` checked, ``rules`` which
    rules its prompts held (``cwm.games.rules_label``)."""
    best = engine.best
    train_report = engine.reports[best.id] if best else None
    return SynthesisResult(
        target=config["target"], game=config["game"], strategy=config["strategy"], model=config["model"],
        seed=config["seed"], budget=config["budget"],
        best_source=best.source if best else "", best_node=best.id if best else None,
        solved=bool(best and best.solved),
        train_accuracy=train_report.transition_accuracy if train_report else 0.0,
        test_accuracy=None if test_report is None else test_report.transition_accuracy,
        train_pass_rate=best.pass_rate if best else 0.0,
        train_by_type=dict(best.by_type) if best else {},
        test_by_type={k: v.rate for k, v in test_report.by_type.items()} if test_report else {},
        llm_calls=engine.processed, input_tokens=engine.usage.input_tokens,
        output_tokens=engine.usage.output_tokens, thinking_tokens=engine.usage.thinking_tokens,
        cost_usd=store.total_cost(), wall_time_s=wall, nodes=tuple(engine.nodes), curve=tuple(engine.curve),
        prompt_hashes=dict(config["prompt_hashes"]), run_dir=str(store.root),
        possibly_paid_calls=int(store.total("possibly_paid_calls")), possibly_paid_usd=store.total("possibly_paid_usd"),
        train_checked=train_report.transitions_total if train_report else 0,
        test_checked=None if test_report is None else test_report.transitions_total,
        test_games=None if test_report is None else test_games, rules=rules,
        test_failures_by_branch=failures_by_branch(test_report) if test_report else {},
    )


__all__ = ["games_key", "load_or_save", "open_store", "result_of", "sandbox_or_none", "test_report"]
