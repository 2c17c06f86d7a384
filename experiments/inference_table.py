"""The paper's Tables 1 and 2: world models and inference functions of the imperfect-information games.

Open deck (Table 1, ``--deck open``): per game and seed, a world model is synthesized, then an inference
function for it; the table gives their train and held-out test transition and inference accuracy, the
posterior check's total-variation distance with its 95% interval and its minimum detectable distance
(``cwm.checks.posterior``, each draw made in a hardened worker; ``--posterior-detect D`` sizes the draws to
detect a distance of D) and the LLM calls, beside the paper's numbers. Closed deck (Table 2, ``--deck closed``): a
world model and its inference function are synthesized together from one player's view; the table gives
their inference accuracy. By default every game replays its recorded session (``--llm recorded``), each
seed its own (seed 0: ``GAME.jsonl``, seed S: ``seeds/GAME.seed<S>.jsonl``); a game without one is a row
saying so, and one recorded for some of the seeds asked for but not all is refused before anything runs. Writes ``table.md``, ``table.json``, ``table.csv``, ``runs.csv`` and
``record.json``, each run's row as soon as it is measured.

    python experiments/inference_table.py                          # Table 1 from the recorded sessions
    python experiments/inference_table.py --deck closed            # Table 2
    python experiments/inference_table.py --llm gemini --seeds 5 --out runs/table1   # paper-sized, live
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository root importable for `experiments`
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from experiments import common, imperfect, inference_report, synthesis_table

EXPERIMENT = "inference_table"


@dataclasses.dataclass(frozen=True)
class InferenceTableConfig:
    """Everything that decides the table (written into ``config.json`` and ``record.json``).

    Attributes:
      games: per-game settings (from ``experiments/configs/`` with the flags applied).
      deck: ``open`` (Table 1) or ``closed`` (Table 2).
      llm: the LLM spec asked for (``recorded``: each game's recorded session; ``auto``: Gemini with a key).
      recordings: the folder of recorded sessions, or ``None`` for the one shipped with cwm.
      first_seed: run seeds are ``first_seed .. first_seed + seeds - 1``.
      posterior: the posterior check's size (open deck).
      cache: SQLite LLM cache file, or ``None``.
      executor: where the runs go (``inline`` runs them one after another).
      out: the run directory.
    """

    games: tuple[common.GameConfig, ...]
    deck: str
    llm: str
    recordings: str | None
    first_seed: int
    posterior: imperfect.PosteriorSettings
    cache: str | None
    executor: str
    out: str


@dataclasses.dataclass(frozen=True)
class InferenceJob:
    """One game and seed, picklable for any executor; ``llm`` is ``NoRecording`` for a game without one."""

    config: common.GameConfig
    seed: int
    deck: str
    llm: str | imperfect.NoRecording
    run_dir: str
    posterior: imperfect.PosteriorSettings
    cache: str | None = None


def measure(job: InferenceJob) -> dict[str, Any]:
    """Runs (or resumes) one game and seed and returns its row; a measured row is saved in ``run_dir/row.json``
    and read back when the run resumes (the syntheses resume by themselves, the posterior check is not redone)."""
    base = {"config_game": job.config.game, "seed": job.seed, "run_dir": job.run_dir}
    if isinstance(job.llm, imperfect.NoRecording):
        return base | job.llm.row()
    saved = Path(job.run_dir) / "row.json"
    if saved.is_file():
        return dict(json.loads(saved.read_text(encoding="utf-8")))
    row = base | (_open_deck(job, job.llm) if job.deck == "open" else _closed_deck(job, job.llm))
    if not row.get("status"):
        common.write_json(saved, row)
    return row


def _open_deck(job: InferenceJob, llm: str) -> dict[str, Any]:
    run_dir = Path(job.run_dir)
    world = synthesis_table.synthesize(synthesis_table.SynthesisJob(
        job.config, job.seed, llm, str(run_dir / "world_model"), cache=job.cache))
    row = {"game": world["game"], "llm": llm, "model": world["model"],
           "transition_train": world["train_accuracy"], "transition_test": world["test_accuracy"],
           "world_model_calls_to_best": world["calls_to_best"], "world_model_calls": world["llm_calls"]}
    source = imperfect.best_source(run_dir / "world_model")
    if not source:
        return row | {"status": "no world model", "llm_calls": world["llm_calls"]}
    result = imperfect.synthesize_inference(job.config, seed=job.seed, llm=llm, run_dir=run_dir / "inference",
                                            deck="open", world_model=source, cache=job.cache)
    row |= _inference_numbers(result, world["llm_calls"], world["cost_usd"]) | {"world_model_solved": world["solved"]}
    row["prompt_hashes"] = world["prompt_hashes"] | row["prompt_hashes"]
    if result.best_source:
        report = imperfect.posterior(job.config.game, result.best_source, job.posterior, job.seed)
        common.write_json(run_dir / "posterior.json", report)
        row |= _posterior_numbers(report)
    return row


def _closed_deck(job: InferenceJob, llm: str) -> dict[str, Any]:
    result = imperfect.synthesize_inference(job.config, seed=job.seed, llm=llm, run_dir=Path(job.run_dir) / "joint",
                                            deck="closed", world_model=None, cache=job.cache)
    return {"game": result.game, "llm": llm, "model": result.model} | _inference_numbers(result, 0, 0.0)


def _inference_numbers(result: Any, earlier_calls: int, earlier_cost: float) -> dict[str, Any]:
    """The inference synthesis's numbers; ``llm_calls`` and ``cost_usd`` add those of the world model before it."""
    return {"solved": result.solved, "inference_train": result.train_accuracy,
            "inference_test": result.test_accuracy, "inference_calls_to_best": synthesis_table.calls_to_best(result),
            "inference_calls": result.llm_calls, "llm_calls": earlier_calls + result.llm_calls,
            "inference_by_type": result.test_by_type or result.train_by_type, "cost_usd": earlier_cost + result.cost_usd,
            "prompt_hashes": result.prompt_hashes, "rules": result.rules}


def _posterior_numbers(report: dict[str, Any]) -> dict[str, Any]:
    if "error" in report:
        return {"posterior_error": report["error"]}
    return {"posterior_tv": report["tv"], "posterior_lo": report["lo"], "posterior_hi": report["hi"],
            "posterior_max_tv": report["max_tv"], "posterior_accuracy": report["accuracy"],
            "posterior_states": len(report["states"]), "posterior_draws": report["draws"],
            "posterior_detectable": report["detectable"]}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=EXPERIMENT, description=__doc__.splitlines()[0])
    common.add_common_args(p, default_executor="inline")
    p.set_defaults(llm=imperfect.RECORDED)
    p.add_argument("--deck", choices=imperfect.DECKS, default="open", help="open (Table 1, default) or closed (Table 2)")
    p.add_argument("--recordings", default=None, metavar="DIR",
                   help="recorded sessions: DIR/<game>.jsonl (open deck), DIR/closed/<game>.jsonl (default: cwm's, a real model's session under real/ in preference to a scripted demo)")
    p.add_argument("--posterior-games", type=int, default=10, help="random games the checked states come from")
    p.add_argument("--posterior-states", type=int, default=20, help="information states checked (default 20)")
    p.add_argument("--posterior-draws", type=int, default=400, help="inference draws per state (default 400; "
                   "with --posterior-detect, the least)")
    p.add_argument("--posterior-detect", type=float, default=None, metavar="D",
                   help="size each state's draws so that a belief D or more from the true posterior (total "
                        "variation) is detected at 95%% (default: --posterior-draws draws; the detectable "
                        "distance is printed either way)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return common.script_main(parser(), _run, EXPERIMENT, argv)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    from cwm.executors import make_executor

    started = _dt.datetime.now(_dt.timezone.utc)
    if args.seeds is None and args.llm == imperfect.RECORDED:
        args.seeds = 1  # each seed replays its own recorded session, and most games ship seed 0's alone
    configs = common.game_configs(args, common.IMPERFECT_INFORMATION_GAMES)
    _check_imperfect(configs)
    out = common.run_directory(args.out, EXPERIMENT)
    config = InferenceTableConfig(configs, args.deck, args.llm, args.recordings, args.first_seed,
                                  _posterior_settings(args), args.cache, args.executor, str(out))
    llms = seed_llms(configs, args)
    jobs = [InferenceJob(c, seed, args.deck, llms[c.game, seed], str(out / args.deck / f"{c.game}-seed{seed}"),
                         config.posterior, args.cache)
            for c in configs for seed in common.seeds_of(c, args.first_seed)]
    executor = make_executor(args.executor)  # a bad spec fails before config.json is written
    runs: list[dict[str, Any]] = []
    try:
        common.begin(out, config)
        for row in executor.imap_unordered(measure, jobs):
            runs.append(row)
            inference_report.write(out, config, runs, argv=argv, started=started)
            if not args.quiet:
                print(inference_report.progress_line(row), flush=True)
    finally:
        executor.close()
    inference_report.write(out, config, runs, argv=argv, started=started)
    print(f"table: {out / 'table.md'}")
    return 0


def seed_llms(configs: Sequence[common.GameConfig], args: argparse.Namespace) -> dict[tuple[str, int], Any]:
    """Each game and seed's LLM spec (``imperfect.game_llm``: with a recorded session, the one of that seed). A
    game with no recorded session at all keeps its rows saying so; one recorded for some of its seeds only
    cannot be averaged over the seeds asked for.

    Raises:
      ExperimentError: a game has a recorded session for one seed asked for and none for another (one line
        naming the game, deck, tier and the seed missing), or a spec cannot be built.
    """
    llms = {(c.game, seed): imperfect.game_llm(args.llm, c.game, args.deck, args.recordings, c.rules, seed)
            for c in configs for seed in common.seeds_of(c, args.first_seed)}
    for c in configs:
        found = [llms[c.game, seed] for seed in common.seeds_of(c, args.first_seed)]
        if not all(isinstance(llm, imperfect.NoRecording) for llm in found):
            for seed, llm in zip(common.seeds_of(c, args.first_seed), found):
                imperfect.require_recording(llm, deck=args.deck, rules=c.rules or "spec", seed=seed)
    return llms


def _check_imperfect(configs: Sequence[common.GameConfig]) -> None:
    from cwm import games

    for c in configs:
        if games.resolve(c.game).perfect_information:
            raise common.ExperimentError(f"{c.game} has perfect information: there is nothing for an inference "
                                         f"function to infer (Table 4 is experiments/synthesis_table.py)")


def _posterior_settings(args: argparse.Namespace) -> imperfect.PosteriorSettings:
    for flag in ("posterior_games", "posterior_states", "posterior_draws"):
        if getattr(args, flag) < 1:
            raise common.ExperimentError(f"--{flag.replace('_', '-')} must be at least 1, got {getattr(args, flag)}")
    detect = args.posterior_detect
    if detect is not None and not 0.0 < detect <= 1.0:
        raise common.ExperimentError(f"--posterior-detect must be a distance in (0, 1], got {detect}")
    return imperfect.PosteriorSettings(args.posterior_games, args.posterior_states, args.posterior_draws, detect)


if __name__ == "__main__":
    sys.exit(main())
