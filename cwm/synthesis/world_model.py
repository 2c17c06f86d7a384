"""World-model synthesis end to end: trajectories, the refinement loop, held-out accuracy, the run record.

``synthesize_world_model`` follows the paper's pipeline for one game: record a few random-play games,
let the LLM write and refine a code world model against checks built from them, then measure the best
program on held-out games mixing random and MCTS play.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cwm import games
from cwm.games import trajectories
from cwm.llm import Client
from cwm.sandbox import Sandbox
from cwm.sandbox.checkers import Checker, world_model_checker
from cwm.synthesis import report as run_report
from cwm.synthesis.engine import Progress
from cwm.synthesis.held_out import DEFAULT_SIMULATIONS, TestSetSettings, held_out_set, mcts_policy
from cwm.synthesis.loop import run_search
from cwm.synthesis.runs import games_key, load_or_save, open_store, result_of, test_report
from cwm.synthesis.settings import SynthesisSettings, settings_from
from cwm.synthesis.store import sha
from cwm.synthesis.target import Target, world_model_target
from cwm.synthesis.types import SynthesisResult
from cwm.types import Trajectory

GameInput = str | games.GameSpec | tuple[str, Sequence[Trajectory]]
# The held-out set can be 100x the training set: its one sandboxed check gets this much time.
TEST_CHECK_SECONDS: float = 900.0


def test_set(game: str | games.GameSpec, *, num_games: int = 100, seed: int = 0, mcts_fraction: float = 0.5,
             mcts_simulations: int = 100) -> list[Trajectory]:
    """Held-out games: ``num_games`` games, the first ``(1 - mcts_fraction)`` share random play, the rest
    MCTS play. Seeds start at ``seed + 100_000`` so they never overlap the training games."""
    n_mcts = int(round(num_games * mcts_fraction))
    base = seed + 100_000
    out = trajectories.collect(game, num_games - n_mcts, seed=base) if num_games - n_mcts else []
    if n_mcts:
        out += trajectories.collect(game, n_mcts, seed=base + num_games, policy_name="mcts",
                                    policy=mcts_policy(simulations=mcts_simulations))
    return out


@contextlib.contextmanager
def _checker_factory(isolate: bool) -> Iterator[Any]:
    """Yields a function (trajectories, wall-clock seconds or None) -> Checker, backed by one sandbox for the
    run unless ``isolate`` is off (the seconds raise the sandbox's wall and CPU limits, for the large test set)."""
    if not isolate:
        yield lambda trajs, seconds=None: world_model_checker(trajs)
        return
    box = Sandbox()

    def make(trajs: Sequence[Trajectory], seconds: float | None = None) -> Checker:
        limits = None if seconds is None else dataclasses.replace(box.limits, wall_s=seconds, cpu_s=seconds)
        return world_model_checker(trajs, sandbox=box, limits=limits)

    try:
        yield make
    finally:
        box.close()


def _inputs(game: GameInput, rules: str | None, settings: SynthesisSettings) -> tuple[str, str, list[Trajectory], Any]:
    """(name, rules text, training games, the spec or None) of a game or a (rules, trajectories) pair; a game's
    training games are chosen from a pool to show its kinds of events (``SynthesisSettings.train_pool``)."""
    if isinstance(game, tuple):
        text, train = game
        if not train:
            raise ValueError("synthesize_world_model: the (rules, trajectories) pair has no trajectories")
        return train[0].game, rules or text, list(train), None
    spec = games.resolve(game)
    train = trajectories.collect_covering(spec, settings.num_train, seed=settings.seed, pool=settings.train_pool)
    return spec.name, rules or games.rules_text(spec), train, spec


def _test_key(given: Sequence[Trajectory] | None) -> str | None:
    """Fingerprint of held-out games passed in (None: generated from num_test and the seed)."""
    if given is None:
        return None
    return sha(json.dumps([trajectories.to_json(t) for t in given], sort_keys=True))[:16]


def synthesize_world_model(game: GameInput, llm: Client, settings: SynthesisSettings | None = None, *,
                           run_dir: str | Path, rules: str | None = None,
                           test_trajectories: Sequence[Trajectory] | None = None, progress: Progress | None = None,
                           **legacy: Any) -> SynthesisResult:
    """Synthesises a code world model of a game and measures it.

    Args:
      game: a game (registry name, OpenSpiel string, spec) or a pair (rules text, training trajectories)
        for a game without a ground truth at hand.
      llm: the LLM client (``cwm.llm.make_client``).
      settings: how the run goes (``SynthesisSettings.of("world_model", ...)``: strategy, budget, seed, the
        training games, the held-out set, what the prompt shows, the sandbox); default the target's.
      run_dir: where everything is saved; an interrupted run in it resumes without repeating LLM calls.
      rules: the rules text (default: the game's registered rules).
      test_trajectories: held-out games; default: generated from the ground truth as ``settings`` says
        (none for a (rules, trajectories) pair without them).
      progress: called with the engine after each processed call.
      legacy: the former keyword arguments (``budget=``, ``strategy=``, ...), deprecated: each is the
        setting of that name.

    Returns:
      The ``SynthesisResult`` (also written to ``run_dir/result.json`` with a summary and a plot).

    Raises:
      UsageError: a setting out of range (a ``ValueError``; checked before ``run_dir`` is touched).
      ResumeError: ``run_dir`` holds a run with other settings.
      LLMError: the client failed for good; rerun with the same arguments to resume.
    """
    start = time.monotonic()
    settings = settings_from("world_model", settings, legacy, "synthesize_world_model")
    root = Path(run_dir)
    name, rules_text, train, spec = _inputs(game, rules, settings)
    with _checker_factory(settings.isolate) as make_checker:
        target = world_model_target(rules_text, train, check=make_checker(train),
                                    examples_per_type=settings.examples_per_type,
                                    max_steps_shown=settings.max_steps_shown,
                                    max_example_chars=settings.max_example_chars)
        train_key = games_key(train)
        config = _config(target, name, llm, settings, train_key, rules_text, test_trajectories)
        store = open_store(root, config, settings, check_key=train_key)
        load_or_save(root / "train.jsonl", lambda: train)
        engine = run_search(target, llm, store, settings, progress=progress)
        # generated after the search (it can take a while for long games), once; later sessions reload it
        test = _test_games(root, spec, test_trajectories, settings, progress=progress is not None)
        test_check = make_checker(test, TEST_CHECK_SECONDS) if test else None
        held_out = test_report(engine, store, test_check) if test_check else None
    result = result_of(engine, store, config, held_out, time.monotonic() - start, test_games=len(test),
                       rules=games.rules_label(spec, rules_text))
    run_report.write_outputs(store, result)
    return result


def _config(target: Target, name: str, llm: Client, settings: SynthesisSettings, train_key: str, rules_text: str,
            test_trajectories: Sequence[Trajectory] | None) -> dict[str, Any]:
    """The run's resume key (``config.json``): what makes two runs the same run."""
    s = settings
    return {"target": target.name, "game": name, "strategy": s.strategy, "seed": s.seed, "model": llm.model,
            "num_train": s.num_train, "train_pool": s.train_pool, "train_sha": train_key[:16], "concurrency": s.concurrency,
            "tree": dataclasses.asdict(s.tree), "request": dataclasses.asdict(s.request),
            "examples_per_type": s.examples_per_type, "max_steps_shown": s.max_steps_shown,
            "max_example_chars": s.max_example_chars,
            "rules_sha": sha(rules_text)[:16], "prompt_hashes": target.prompt_hashes(), "budget": s.budget,
            # test.jsonl is generated once from these; a resume with others must not reuse it
            "num_test": s.num_test, "test_mcts_simulations": s.test_mcts_simulations,
            "test_transitions": s.test_transitions if s.num_test is None else None,
            "test_sha": _test_key(test_trajectories)}


def _test_games(root: Path, spec: games.GameSpec | None, given: Sequence[Trajectory] | None,
                settings: SynthesisSettings, *, progress: bool) -> list[Trajectory]:
    """The held-out games: given ones, else generated from the ground truth (``num_test`` games, or a
    transition-sized set from the shared cache); saved in the run once, then reloaded."""
    if given is not None:
        return load_or_save(root / "test.jsonl", lambda: given)
    if spec is None or settings.num_test == 0:
        return []
    seed = settings.seed
    if settings.num_test is None:
        sized = TestSetSettings(settings.test_transitions, mcts_simulations=settings.test_mcts_simulations)
        return load_or_save(root / "test.jsonl", lambda: held_out_set(spec, seed=seed, settings=sized,
                                                                      executor=settings.test_executor,
                                                                      progress=progress))
    sims = settings.test_mcts_simulations or DEFAULT_SIMULATIONS
    return load_or_save(root / "test.jsonl", lambda: test_set(spec, num_games=settings.num_test, seed=seed,
                                                              mcts_simulations=sims))


__all__ = ["GameInput", "load_or_save", "mcts_policy", "result_of", "synthesize_world_model", "test_report", "test_set"]
