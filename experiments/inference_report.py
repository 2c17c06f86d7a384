"""The outputs of ``experiments/inference_table.py``: Table 1 (open deck) and Table 2 (closed deck) in
markdown, JSON and CSV, and the run's record; rewritten after every measured run, so a stopped run shows
what it has."""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments import common, tables

EXPERIMENT = "inference_table"
OPEN_KEYS = ("transition_train", "transition_test", "inference_train", "inference_test", "posterior_tv",
             "posterior_lo", "posterior_hi", "posterior_detectable", "posterior_accuracy", "world_model_calls_to_best",
             "inference_calls_to_best", "llm_calls", "cost_usd")
CLOSED_KEYS = ("inference_train", "inference_test", "inference_calls_to_best", "llm_calls", "cost_usd")


def _paper(r: dict[str, Any], keys: Sequence[str]) -> str:
    return " / ".join("—" if r.get(f"paper_{k}") is None else f"{r[f'paper_{k}']:g}" for k in keys)


def _no_numbers(r: dict[str, Any], columns: int) -> str | None:
    """The line of a game with nothing measured (``no recording``, ``no world model``), else ``None``."""
    if not r.get("status"):
        return None
    where = f" (`{r['recording']}`)" if r.get("recording") else ""
    return f"| {r['game']} | {r['status']}{where} |" + " |" * (columns - 2)


def open_markdown(rows: Sequence[dict[str, Any]], *, llm: str) -> str:
    """Table 1's layout: transition and inference accuracy, posterior distance and LLM calls per game."""
    lines = [f"# Imperfect information, open deck (Table 1 layout); LLM: `{llm}`", "",
             "| game | seeds | transition train | transition test | inference train | inference test "
             "| posterior TV [95% CI], detectable | LLM calls to reach (model + inference) | LLM calls | paper: transition "
             "test / inference test / calls |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(_no_numbers(r, 10) or (
            f"| {r['game']} | {r['seeds']} | {tables.cell(r['transition_train'], r['transition_train_sd'], '.4f')} "
            f"| {tables.cell(r['transition_test'], r['transition_test_sd'], '.4f')} "
            f"| {tables.cell(r['inference_train'], r['inference_train_sd'], '.4f')} "
            f"| {tables.cell(r['inference_test'], r['inference_test_sd'], '.4f')} | {_tv(r)} "
            f"| {tables.cell(r['world_model_calls_to_best'], None, '.1f')} + "
            f"{tables.cell(r['inference_calls_to_best'], None, '.1f')} | {tables.cell(r['llm_calls'], None, '.1f')} "
            f"| {_paper(r, ('test_accuracy', 'inference_test_accuracy', 'llm_calls'))} |"))
    lines += ["", "Means over seeds (± sample standard deviation). Transition accuracy: the world model's checks on "
              "the training games and on held-out games (half random, half MCTS play). Inference accuracy: the "
              "inference function's reconstruction checks on every player's view of those games, replayed in the "
              "synthesized world model. Posterior TV: total-variation distance between the inference function's "
              "draws of the hidden information and the true posterior under random play, at information states "
              "of random games, its draws replayed in the ground truth (`cwm.checks.posterior`; not in the paper); "
              "detectable: the minimum detectable distance (a belief that far from the true posterior at every "
              "state gets an interval above 0 at 95%). "
              "LLM calls to reach: calls until the best program appeared; LLM calls: all calls of both syntheses."]
    return "\n".join(lines) + "\n"


def _tv(r: dict[str, Any]) -> str:
    if r.get("posterior_tv") is None:
        return "n/a"
    detectable = "" if r.get("posterior_detectable") is None else f", {r['posterior_detectable']:.3f}"
    return f"{r['posterior_tv']:.3f} [{r['posterior_lo']:.3f}, {r['posterior_hi']:.3f}]{detectable}"


def closed_markdown(rows: Sequence[dict[str, Any]], *, llm: str) -> str:
    """Table 2's layout: inference accuracy of the jointly synthesized world model and inference function."""
    lines = [f"# Imperfect information, closed deck (Table 2 layout); LLM: `{llm}`", "",
             "| game | seeds | solved | inference train | inference test | LLM calls to reach | LLM calls "
             "| paper: inference test |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(_no_numbers(r, 8) or (
            f"| {r['game']} | {r['seeds']} | {r['solved']}/{r['seeds']} "
            f"| {tables.cell(r['inference_train'], r['inference_train_sd'], '.4f')} "
            f"| {tables.cell(r['inference_test'], r['inference_test_sd'], '.4f')} "
            f"| {tables.cell(r['inference_calls_to_best'], r['inference_calls_to_best_sd'], '.1f')} "
            f"| {tables.cell(r['llm_calls'], None, '.1f')} | {_paper(r, ('closed_inference_test_accuracy',))} |"))
    lines += ["", "Means over seeds (± sample standard deviation). The world model and its inference function are "
              "one program, written from games each seen from one player's seat only. Inference accuracy: the "
              "fraction of its checks passed (each history replayed in its own model, the end of each game "
              "included, and random play to the end) on the training games and on held-out random games."]
    return "\n".join(lines) + "\n"


def progress_line(row: dict[str, Any]) -> str:
    if row.get("status"):
        return f"{row['game']} seed {row['seed']}: {row['status']}"
    tv = "" if row.get("posterior_tv") is None else (
        f", posterior TV {row['posterior_tv']:.3f} [{row['posterior_lo']:.3f}, {row['posterior_hi']:.3f}], "
        f"detectable {row.get('posterior_detectable', 1.0):.3f}")
    return (f"{row['game']} seed {row['seed']}: inference train {row['inference_train']:.4f}, test "
            f"{row['inference_test']}{tv}, {row['llm_calls']} calls")


def write(out: Path, config: Any, runs: list[dict[str, Any]], *, argv: list[str], started: _dt.datetime) -> None:
    """Writes the tables and the record of the runs measured so far."""
    order = [c.game for c in config.games]
    runs.sort(key=lambda r: (order.index(r["config_game"]), r["seed"]))
    keys = OPEN_KEYS if config.deck == "open" else CLOSED_KEYS
    rows = tables.rows_over_seeds(runs, config.games, keys)
    specs = sorted({str(r["llm"]) for r in runs if r.get("llm")}) or [config.llm]
    render = open_markdown if config.deck == "open" else closed_markdown
    (out / "table.md").write_text(render(rows, llm=", ".join(specs)), encoding="utf-8")
    common.write_json(out / "table.json", {"rows": rows, "runs": runs})
    common.write_csv(out / "table.csv", rows)
    common.write_csv(out / "runs.csv", [{k: v for k, v in r.items() if k != "prompt_hashes"} for r in runs])
    from cwm.synthesis import RequestSettings, TreeSettings

    llm = {"spec": config.llm, "resolved": specs, "models": sorted({r["model"] for r in runs if r.get("model")}),
           "request": dataclasses.asdict(RequestSettings()), "tree": dataclasses.asdict(TreeSettings())}
    seeds = {c.game: list(common.seeds_of(c, config.first_seed)) for c in config.games}
    common.write_record(out, experiment=EXPERIMENT, config=config, argv=argv, llm=llm,
                        prompt_hashes={k: v for r in runs for k, v in r.get("prompt_hashes", {}).items()}, seeds=seeds,
                        results={"rows": rows, "runs": runs}, started=started)
