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

import numpy as np

from cwm import games
from cwm.games import trajectories
from cwm.llm import Client
from cwm.sandbox import Sandbox
from cwm.sandbox.checkers import Checker, world_model_checker
from cwm.synthesis import report as run_report
from cwm.synthesis.engine import Engine, Progress
from cwm.synthesis.held_out import DEFAULT_SIMULATIONS, DEFAULT_TRANSITIONS, TestSetSettings, held_out_set
from cwm.synthesis.loop import STRATEGIES, RequestSettings, Strategy, TreeSettings, run_search
from cwm.synthesis.render import EXAMPLE_CHARS
from cwm.synthesis.store import RunStore, sha
from cwm.synthesis.target import world_model_target
from cwm.synthesis.types import SynthesisResult
from cwm.types import CheckReport, Trajectory, UsageError

GameInput = str | games.GameSpec | tuple[str, Sequence[Trajectory]]
# The held-out set can be 100x the training set: its one sandboxed check gets this much time.
TEST_CHECK_SECONDS: float = 900.0


def mcts_policy(*, simulations: int = 100, rollouts: int = 1) -> trajectories.Policy:
    """A UCT player (``planners.mcts.MCTS``, c = 2) as a trajectory policy.

    Randomness: each move's search is seeded with one integer drawn from the game's generator, so a
    recorded game is reproducible from its seed.
    """
    from planners.config import SearchConfig
    from planners.mcts import MCTS

    def policy(state: Any, rng: np.random.Generator) -> int:
        return int(MCTS(SearchConfig(num_simulations=simulations, rollouts=rollouts), seed=rng).step(state))

    return policy


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


def _inputs(game: GameInput, rules: str | None, num_train: int, seed: int) -> tuple[str, str, list[Trajectory], Any]:
    """(name, rules text, training games, the spec or None) of a game or a (rules, trajectories) pair."""
    if isinstance(game, tuple):
        text, train = game
        if not train:
            raise ValueError("synthesize_world_model: the (rules, trajectories) pair has no trajectories")
        return train[0].game, rules or text, list(train), None
    spec = games.resolve(game)
    return spec.name, rules or games.rules_text(spec), trajectories.collect(spec, num_train, seed=seed), spec


def _validate(*, strategy: str, budget: int, concurrency: int, num_train: int, num_test: int | None,
              test_mcts_simulations: int | None, test_transitions: int, examples_per_type: int, max_steps_shown: int | None,
              max_example_chars: int | None) -> None:
    """Refuses bad settings before anything is written: a run directory created with them would refuse
    the corrected rerun (its config differs) and could hold a paid call made under them."""
    if strategy not in STRATEGIES:
        raise UsageError(f"synthesize_world_model: unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    at_least = {"budget": (budget, 1), "concurrency": (concurrency, 1), "num_train": (num_train, 1),
                "num_test": (0 if num_test is None else num_test, 0),
                "test_mcts_simulations": (1 if test_mcts_simulations is None else test_mcts_simulations, 1),
                "test_transitions": (test_transitions, 1),
                "examples_per_type": (examples_per_type, 1),
                "max_steps_shown": (1 if max_steps_shown is None else max_steps_shown, 1),
                "max_example_chars": (1 if max_example_chars is None else max_example_chars, 1)}
    for name, (value, low) in at_least.items():
        if value < low:
            raise UsageError(f"synthesize_world_model: {name} must be >= {low}, got {value}")


def _test_key(given: Sequence[Trajectory] | None) -> str | None:
    """Fingerprint of held-out games passed in (None: generated from num_test and the seed)."""
    if given is None:
        return None
    return sha(json.dumps([trajectories.to_json(t) for t in given], sort_keys=True))[:16]


def load_or_save(path: Path, make: Any) -> list[Trajectory]:
    if path.is_file():
        return trajectories.load_open(path)
    items = list(make())
    trajectories.save(path, items)
    return items


def synthesize_world_model(
    game: GameInput,
    *,
    llm: Client,
    run_dir: str | Path,
    strategy: Strategy = "tree",
    budget: int = 500,
    seed: int = 0,
    rules: str | None = None,
    num_train: int = 5,
    test_trajectories: Sequence[Trajectory] | None = None,
    num_test: int | None = None,
    test_transitions: int = DEFAULT_TRANSITIONS,
    test_mcts_simulations: int | None = None,
    test_executor: str = "local",
    concurrency: int = 1,
    tree: TreeSettings | None = None,
    request: RequestSettings | None = None,
    examples_per_type: int = 5,
    max_steps_shown: int | None = None,
    max_example_chars: int | None = EXAMPLE_CHARS,
    isolate: bool = True,
    progress: Progress | None = None,
) -> SynthesisResult:
    """Synthesises a code world model of a game and measures it.

    Args:
      game: a game (registry name, OpenSpiel string, spec) or a pair (rules text, training trajectories)
        for a game without a ground truth at hand.
      llm: the LLM client (``cwm.llm.make_client``).
      run_dir: where everything is saved; an interrupted run in it resumes without repeating LLM calls.
      strategy: "tree" or "conversation".
      budget: LLM-call budget (paper: 500).
      seed: seeds the training games (game i: seed + i), the test games and the search.
      rules: the rules text (default: the game's registered rules).
      num_train: training games of uniformly random play (paper: 5).
      test_trajectories: held-out games; default: generated from the ground truth, half random and half
        MCTS play (none for a (rules, trajectories) pair without ``test_trajectories``).
      num_test: ``None`` (default): the held-out set holds ``test_transitions`` transitions and is shared
        through the cache (``cwm.synthesis.held_out.held_out_set``); ``0``: no held-out set; ``N``: exactly
        ``N`` games, generated in this process (``test_set``).
      test_transitions: the held-out set's size in transitions (paper: 10,000).
      test_mcts_simulations: simulations per move of the MCTS player of the test games (``None``: 100, or
        ``test_sets.LONG_GAME_SIMULATIONS`` for a long game, ``test_sets.default_simulations``).
      test_executor: where a transition-sized held-out set's games are played (``cwm.executors``).
      concurrency: LLM calls in flight at once (tree search).
      tree: tree-search hyperparameters (default ``TreeSettings()``).
      request: LLM request settings (default ``RequestSettings()``).
      examples_per_type: example tests of each type in the initial prompt (paper: 5).
      max_steps_shown: cut each training game after this many steps in the prompt (default: all; the
        checks still use every step). For games with long trajectories (backgammon, gin rummy).
      max_example_chars: list whole training games in the prompt while the listing stays within this many
        characters (default ``render.EXAMPLE_CHARS``, 70,000; ``None``: every game; the checks still use
        every game).
      isolate: check candidates in the sandbox (forked, limited processes; ``cwm.sandbox.Sandbox``).
      progress: called with the engine after each processed call.

    Returns:
      The ``SynthesisResult`` (also written to ``run_dir/result.json`` with a summary and a plot).

    Raises:
      UsageError: a setting out of range (a ``ValueError``; checked before ``run_dir`` is touched).
      ResumeError: ``run_dir`` holds a run with other settings.
      LLMError: the client failed for good; rerun with the same arguments to resume.
    """
    start = time.monotonic()
    _validate(strategy=strategy, budget=budget, concurrency=concurrency, num_train=num_train, num_test=num_test,
              test_mcts_simulations=test_mcts_simulations, test_transitions=test_transitions,
              examples_per_type=examples_per_type, max_steps_shown=max_steps_shown,
              max_example_chars=max_example_chars)
    tree, request = tree or TreeSettings(), request or RequestSettings()
    root = Path(run_dir)
    name, rules_text, train, spec = _inputs(game, rules, num_train, seed)
    train_key = sha(json.dumps([trajectories.to_json(t) for t in train], sort_keys=True))
    with _checker_factory(isolate) as make_checker:
        target = world_model_target(rules_text, train, check=make_checker(train), examples_per_type=examples_per_type,
                                    max_steps_shown=max_steps_shown, max_example_chars=max_example_chars)
        config = {"target": target.name, "game": name, "strategy": strategy, "seed": seed, "model": llm.model,
                  "num_train": len(train), "train_sha": train_key[:16], "concurrency": concurrency,
                  "tree": dataclasses.asdict(tree), "request": dataclasses.asdict(request),
                  "examples_per_type": examples_per_type, "max_steps_shown": max_steps_shown,
                  "max_example_chars": max_example_chars,
                  "rules_sha": sha(rules_text)[:16], "prompt_hashes": target.prompt_hashes(), "budget": budget,
                  # test.jsonl is generated once from these; a resume with others must not reuse it
                  "num_test": num_test, "test_mcts_simulations": test_mcts_simulations,
                  "test_transitions": test_transitions if num_test is None else None,
                  "test_sha": _test_key(test_trajectories)}
        store = RunStore(root, config=config, check_key=train_key)
        load_or_save(root / "train.jsonl", lambda: train)
        engine = run_search(target, llm, store, strategy=strategy, budget=budget, seed=seed,
                            concurrency=concurrency, tree=tree, request=request, progress=progress)
        # generated after the search (it can take a while for long games), once; later sessions reload it
        test = _test_games(root, spec, test_trajectories, num_test=num_test, seed=seed,
                           settings=TestSetSettings(test_transitions, mcts_simulations=test_mcts_simulations),
                           executor=test_executor, progress=progress is not None)
        test_check = make_checker(test, TEST_CHECK_SECONDS) if test else None
        held_out = test_report(engine, store, test_check) if test_check else None
    result = result_of(engine, store, config, held_out, time.monotonic() - start)
    run_report.write_outputs(store, result)
    return result


def _test_games(root: Path, spec: games.GameSpec | None, given: Sequence[Trajectory] | None, *,
                num_test: int | None, seed: int, settings: TestSetSettings, executor: str,
                progress: bool) -> list[Trajectory]:
    """The held-out games: given ones, else generated from the ground truth (``num_test`` games, or a
    transition-sized set from the shared cache); saved in the run once, then reloaded."""
    if given is not None:
        return load_or_save(root / "test.jsonl", lambda: given)
    if spec is None or num_test == 0:
        return []
    if num_test is None:
        return load_or_save(root / "test.jsonl", lambda: held_out_set(spec, seed=seed, settings=settings,
                                                                      executor=executor, progress=progress))
    sims = settings.mcts_simulations or DEFAULT_SIMULATIONS
    return load_or_save(root / "test.jsonl", lambda: test_set(spec, num_games=num_test, seed=seed,
                                                              mcts_simulations=sims))


def test_report(engine: Engine, store: RunStore, check: Checker) -> CheckReport | None:
    best = engine.best
    if best is None:
        return None
    path = store.root / "test_report.json"
    key = sha(best.source)
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("source_sha") == key:
            return CheckReport.from_json(data["report"])
    report = check(best.source)
    store.write_json("test_report.json", {"source_sha": key, "node": best.id, "report": report.to_json()})
    return report


def result_of(engine: Engine, store: RunStore, config: dict[str, Any], test_report: CheckReport | None,
            wall: float) -> SynthesisResult:
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
    )


__all__ = ["GameInput", "load_or_save", "mcts_policy", "result_of", "synthesize_world_model", "test_report", "test_set"]
