"""The paper's Table 4: train/test transition accuracy of synthesized world models, and LLM calls to reach it.

For each game, ``--seeds`` synthesis runs (``cwm.synthesis.synthesize_world_model``); the table gives
the mean over seeds of the best program's train and held-out test transition accuracy and of the LLM
calls made until that program was found, next to the paper's numbers. Writes ``table.md``,
``table.json``, ``table.csv`` (one row per game), ``runs.csv`` (one row per run) and ``record.json``.

    python experiments/synthesis_table.py --llm gemini --out runs/table4              # paper-sized
    python experiments/synthesis_table.py --games tic_tac_toe --seeds 1 --num-test 4  # offline, seconds
    python experiments/synthesis_table.py --executor ray:HEAD:6379 --out runs/table4    # runs on a cluster
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwm.stats import perfect_score_note
from cwm.synthesis import SynthesisSettings

if __package__ in (None, ""):  # run as a file: make the repository root importable for `experiments`
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from experiments import common, tables

EXPERIMENT = "synthesis_table"


@dataclasses.dataclass(frozen=True)
class SynthesisTableConfig:
    """Everything that decides the table (written into ``config.json`` and ``record.json``).

    Attributes:
      games: per-game settings (from ``experiments/configs/`` with the flags applied).
      llm: the LLM spec asked for (``auto`` resolves per game).
      first_seed: run seeds are ``first_seed .. first_seed + seeds - 1``.
      concurrency: LLM calls in flight per run (tree search).
      cache: SQLite LLM cache file, or ``None``.
      executor: where the runs go (``inline`` runs them one after another).
      out: the run directory.
    """

    games: tuple[common.GameConfig, ...]
    llm: str
    first_seed: int
    concurrency: int
    cache: str | None
    executor: str
    out: str


@dataclasses.dataclass(frozen=True)
class SynthesisJob:
    """One synthesis run, picklable for any executor."""

    config: common.GameConfig
    seed: int
    llm: str
    run_dir: str
    concurrency: int = 1
    cache: str | None = None
    test_executor: str = "local"


def synthesize(job: SynthesisJob) -> dict[str, Any]:
    """Runs (or resumes) one synthesis and returns its row for the table, with where it ran (``worker``:
    host, pid, Ray node)."""
    from cwm.executors import worker_place
    from cwm.llm import make_client
    from cwm.synthesis import synthesize_world_model

    c = job.config
    client = make_client(job.llm, run_dir=Path(job.run_dir), cache=Path(job.cache) if job.cache else None)
    result = synthesize_world_model(c.spec(), client, SynthesisSettings.of("world_model", budget=c.budget, seed=job.seed, strategy=c.strategy, num_train=c.num_train, train_pool=c.train_pool, num_test=c.num_test, test_transitions=c.test_transitions, test_mcts_simulations=c.test_mcts_simulations, test_executor=job.test_executor, concurrency=job.concurrency), run_dir=job.run_dir)
    return {
        "game": result.game, "seed": job.seed, "llm": job.llm, "model": result.model, "solved": result.solved,
        "train_accuracy": result.train_accuracy, "test_accuracy": result.test_accuracy,
        "test_checked": result.test_checked, "test_games": result.test_games, "calls_to_best": calls_to_best(result), "llm_calls": result.llm_calls, "budget": result.budget,
        "cost_usd": result.cost_usd, "wall_time_s": round(result.wall_time_s, 3),
        "train_by_type": result.train_by_type, "test_by_type": result.test_by_type,
        "prompt_hashes": result.prompt_hashes, "rules": result.rules, "run_dir": job.run_dir, "replies": replies_of(job.llm, result.model),
        "worker": worker_place(),
    }


def replies_of(llm: str, model: str) -> str:
    """Where a run's replies came from, as the table says it: a shipped real-model session (and who answered
    it), a scripted demo recording, or a live model."""
    from cwm.pipeline import recording_provenance

    if not llm.startswith("replay:"):
        return f"live: {model}"
    provenance = recording_provenance(Path(llm.removeprefix("replay:")))
    return "scripted demo (hand-written replies)" if provenance is None else \
        f"real model: {provenance.get('answered_by')}, {provenance.get('date')}"


def calls_to_best(result: Any) -> int:
    """LLM calls made until the best program appeared (the paper's "LLM calls to reach" the accuracy)."""
    for point in result.curve:
        if point.best_pass_rate >= result.train_pass_rate:
            return int(point.calls)
    return int(result.llm_calls)


def table_rows(runs: Sequence[dict[str, Any]], configs: Sequence[common.GameConfig]) -> list[dict[str, Any]]:
    """One row per game: means (and standard deviations) over its seeds, and the paper's numbers."""
    rows = tables.rows_over_seeds(runs, configs, ("train_accuracy", "test_accuracy", "calls_to_best", "llm_calls",
                                                  "cost_usd"))
    for row, c in zip(rows, configs):
        row["replies"] = sorted({r["replies"] for r in runs if r["config_game"] == c.game and r.get("replies")})
        row["rules"] = sorted({r["rules"] for r in runs if r["config_game"] == c.game and r.get("rules")})
        row["test_bounds"] = [(r["seed"], int(r["test_checked"]), r.get("test_games")) for r in runs
                              if r["config_game"] == c.game
                              and not r.get("status") and r.get("test_accuracy") == 1.0 and r.get("test_checked")]
    return rows


def markdown(rows: Sequence[dict[str, Any]], *, llm: str) -> str:
    """Table 4's layout: per game, train and test transition accuracy and LLM calls to reach them."""
    lines = [
        f"# Synthesis accuracy (Table 4 layout); LLM: `{llm}`",
        "",
        "| game | seeds | solved | train acc. | test acc. | LLM calls to reach | LLM calls | cost $ "
        "| paper: train / test / calls |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    replies: dict[str, str] = {}
    for r in rows:
        paper = " / ".join("—" if r.get(f"paper_{k}") is None else f"{r[f'paper_{k}']:g}"
                           for k in ("train_accuracy", "test_accuracy", "llm_calls"))
        lines.append(
            f"| {r['game']} | {r['seeds']} | {r['solved']}/{r['seeds']} "
            f"| {tables.cell(r['train_accuracy'], r['train_accuracy_sd'], '.4f')} "
            f"| {tables.cell(r['test_accuracy'], r['test_accuracy_sd'], '.4f')} "
            f"| {tables.cell(r['calls_to_best'], r['calls_to_best_sd'], '.1f')} "
            f"| {tables.cell(r['llm_calls'], r['llm_calls_sd'], '.1f')} | {tables.cell(r['cost_usd'], None, '.2f')} "
            f"| {paper} |")
        replies[r["game"]] = "; ".join(r.get("replies", ()))
    lines += ["", "Replies per game:", *(f"- {game}: {how}" for game, how in replies.items() if how)]
    lines += ["", "Rules in the prompts (spec: specification tier; prose: rulebook tier; sha256: a rules file):",
              *(f"- {r['game']}: {', '.join(r['rules'])}" for r in rows if r.get("rules"))]
    bounds = [f"- {r['game']}, seed {seed}: held-out{perfect_score_note(checked, checked, games=n)}" for r in rows
              for seed, checked, n in r.get("test_bounds", ())]
    if bounds:
        lines += ["", "What a held-out accuracy of 1.0 bounds, per program (one per seed; transitions of the same "
                  "held-out games are not independent, so the rate per transition holds under that assumption, "
                  "the rate per game, where the games are counted, without it):",
                  *bounds]
    lines += ["", "Means over seeds (± sample standard deviation). Accuracy: fraction of recorded transitions "
              "on which every check passes, for the best program; test: held-out games, half random and half "
              "MCTS play. LLM calls to reach: calls made until the best program appeared."]
    return "\n".join(lines) + "\n"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=EXPERIMENT, description=__doc__.splitlines()[0])
    common.add_common_args(p, default_executor="inline")
    p.add_argument("--concurrency", type=int, default=1, help="LLM calls in flight per run (default 1)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return common.script_main(parser(), _run, EXPERIMENT, argv)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    from cwm.executors import make_executor

    started = _dt.datetime.now(_dt.timezone.utc)
    configs = common.game_configs(args, common.PERFECT_INFORMATION_GAMES)
    out = common.run_directory(args.out, EXPERIMENT)
    config = SynthesisTableConfig(configs, args.llm, args.first_seed, args.concurrency, args.cache,
                                  args.executor, str(out))
    llms = check_inputs(config)  # everything that can be checked fails before config.json is written
    # runs fanned out on an executor play their held-out games in their own process: a pool per run would
    # oversubscribe the cores the runs already share
    test_executor = "local" if args.executor == "inline" else "inline"
    jobs = [SynthesisJob(c, seed, llms[c.game, seed], str(out / "synthesis" / f"{c.game}-seed{seed}"),
                         args.concurrency, args.cache, test_executor)
            for c in configs for seed in common.seeds_of(c, args.first_seed)]
    executor = make_executor(args.executor)
    runs = []
    try:
        common.begin(out, config)
        for row in executor.imap_unordered(synthesize, jobs):
            runs.append(row)
            if not args.quiet:
                print(f"{row['game']} seed {row['seed']}: train {row['train_accuracy']:.4f}, test "
                      f"{row['test_accuracy']}, {row['calls_to_best']}/{row['llm_calls']} calls", flush=True)
    finally:
        executor.close()
    _write(out, config, argv, jobs, runs, started)
    print(f"table: {out / 'table.md'}")
    return 0


def check_inputs(config: SynthesisTableConfig) -> dict[tuple[str, int], str]:
    """Checks what the runs need before anything is written; returns each game and seed's LLM spec (``auto``
    resolved: with no key, the session recorded for that seed, ``cwm.pipeline.recording_for``).

    Raises:
      ExperimentError: ``--concurrency`` below 1, or an LLM spec that cannot be built (no key, no
        recording for the game, tier and seed, a missing replay file).
    """
    if config.concurrency < 1:
        raise common.ExperimentError(f"--concurrency must be at least 1, got {config.concurrency}")
    llms = {(c.game, seed): common.resolve_llm(config.llm, c.game, c.rules, seed)
            for c in config.games for seed in common.seeds_of(c, config.first_seed)}
    checked: set[str] = set()
    for (game, seed), spec in llms.items():  # each client once: a spec shared by all seeds is one check
        if spec not in checked:
            checked.add(spec)
            common.check_llm(spec, f"--llm for {game}" + (f" seed {seed}" if seed else ""))
    return llms


def _write(out: Path, config: SynthesisTableConfig, argv: list[str], jobs: Sequence[SynthesisJob],
           runs: list[dict[str, Any]], started: _dt.datetime) -> None:
    by_dir = {j.run_dir: j for j in jobs}
    for r in runs:
        r["config_game"] = by_dir[r["run_dir"]].config.game
    runs.sort(key=lambda r: ([c.game for c in config.games].index(r["config_game"]), r["seed"]))
    rows = table_rows(runs, config.games)
    llm_specs = sorted({j.llm for j in jobs})
    (out / "table.md").write_text(markdown(rows, llm=", ".join(llm_specs)), encoding="utf-8")
    common.write_json(out / "table.json", {"rows": rows, "runs": runs})
    common.write_csv(out / "table.csv", rows)
    common.write_csv(out / "runs.csv", [{k: v for k, v in r.items() if k != "prompt_hashes"} for r in runs])
    from cwm.synthesis import RequestSettings, TreeSettings

    llm = {"spec": config.llm, "resolved": llm_specs, "models": sorted({r["model"] for r in runs}),
           "request": dataclasses.asdict(RequestSettings()), "tree": dataclasses.asdict(TreeSettings()),
           "concurrency": config.concurrency}
    hashes = {k: v for r in runs for k, v in r["prompt_hashes"].items()}
    seeds = {c.game: list(common.seeds_of(c, config.first_seed)) for c in config.games}
    common.write_record(out, experiment=EXPERIMENT, config=config, argv=argv, llm=llm, prompt_hashes=hashes,
                        seeds=seeds, results={"rows": rows, "runs": runs}, started=started)


if __name__ == "__main__":
    sys.exit(main())
