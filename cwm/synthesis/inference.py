"""Inference synthesis end to end: open deck (an inference function for a given world model) and closed deck
(a world model and its inference function written together from one player's view).

``synthesize_inference`` records the training games, runs the same refinement loop as world-model synthesis
(Thompson-sampled tree search or a conversation, resumable, every prompt, reply, program and report saved),
and measures the best program's inference accuracy on held-out games of random play. The paper's Table 1
(open deck) and Table 2 (closed deck) report exactly these accuracies.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from cwm import games
from cwm.games import trajectories
from cwm.llm import Client
from cwm.sandbox import Sandbox
from cwm.synthesis import report as run_report
from cwm.synthesis.engine import Progress
from cwm.synthesis.inference_target import (
    VIEW_CHARS,
    inference_checker,
    inference_target,
    joint_target,
    views_of,
)
from cwm.synthesis.loop import STRATEGIES, RequestSettings, Strategy, TreeSettings, run_search
from cwm.synthesis.store import RunStore, sha
from cwm.synthesis.types import SynthesisResult
from cwm.synthesis.world_model import TEST_CHECK_SECONDS, load_or_save, result_of, test_report
from cwm.types import ClosedTrajectory, Trajectory, UsageError

Deck = Literal["open", "closed"]


def closed_views(items: Sequence[Trajectory]) -> list[ClosedTrajectory]:
    """Closed-deck training data: game ``i`` seen from player ``i mod N``'s seat only (every seat appears)."""
    return [trajectories.closed_view(t, i % t.num_players) for i, t in enumerate(items)]


def synthesize_inference(
    game: str | games.GameSpec,
    *,
    llm: Client,
    run_dir: str | Path,
    deck: Deck = "open",
    world_model: str | None = None,
    strategy: Strategy = "tree",
    budget: int = 500,
    seed: int = 0,
    rules: str | None = None,
    num_train: int = 5,
    num_test: int = 100,
    concurrency: int = 1,
    tree: TreeSettings | None = None,
    request: RequestSettings | None = None,
    isolate: bool = True,
    progress: Progress | None = None,
    hidden: str = "history",
    max_example_chars: int | None = VIEW_CHARS,
) -> SynthesisResult:
    """Synthesises an inference function (``deck="open"``, for the world model ``world_model``) or a world
    model with its inference function (``deck="closed"``), and measures it on held-out games.

    Args:
      game: the game (registry name, OpenSpiel string or spec).
      llm: the LLM client.
      run_dir: where everything is saved; an interrupted run resumes without repeating LLM calls.
      deck: ``open`` (every player's view and the real histories of the training games are known, and the
        world model is given) or ``closed`` (each training game only from one player's seat).
      world_model: the world model's source (open deck; required there).
      strategy, budget, seed, rules, num_train, concurrency, tree, request, isolate, progress: as in
        ``synthesize_world_model``.
      num_test: held-out games of random play (their players' views measure the inference accuracy).
      hidden: what the function samples: ``history`` (``resample_history``, the default) or ``state``
        (``resample_state``, the hidden-state variant: open deck only; weaker, as the state need not be
        reachable).
      max_example_chars: list whole player views in the prompt while they stay within this many characters
        (default ``VIEW_CHARS``, 40,000; ``None``: every view; the checks still use every view).

    Returns:
      The ``SynthesisResult`` (``target`` is ``inference`` or ``joint``; its accuracies are inference
      accuracies: the fraction of inference checks passed).

    Raises:
      UsageError: a setting out of range, a deck other than open or closed, or an open deck without a world
        model (checked before ``run_dir`` is touched).
    """
    start = time.monotonic()
    _validate(deck=deck, world_model=world_model, strategy=strategy, budget=budget, num_train=num_train,
              num_test=num_test, concurrency=concurrency, hidden=hidden,
              max_example_chars=max_example_chars)
    kind = "state" if hidden == "state" else None
    tree, request = tree or TreeSettings(), request or RequestSettings()
    spec = games.resolve(game)
    text = rules or games.rules_text(spec)
    train = trajectories.collect(spec, num_train, seed=seed)
    views = views_of(train) if deck == "open" else closed_views(train)
    root = Path(run_dir)
    with sandbox_or_none(isolate) as box:
        check = inference_checker(views, world_model=world_model, sandbox=box, kind=kind)
        target = (inference_target(text, train, world_model or "", check=check, hidden=hidden,
                                   max_example_chars=max_example_chars) if deck == "open"
                  else joint_target(text, views, check=check, max_example_chars=max_example_chars))
        config = {"target": target.name, "deck": deck, "hidden": hidden, "game": spec.name, "strategy": strategy, "seed": seed,
                  "model": llm.model, "num_train": num_train, "concurrency": concurrency,
                  "tree": dataclasses.asdict(tree), "request": dataclasses.asdict(request),
                  "rules_sha": sha(text)[:16], "prompt_hashes": target.prompt_hashes(), "budget": budget,
                  "num_test": num_test, "world_model_sha": sha(world_model)[:16] if world_model else None,
                  "max_example_chars": max_example_chars}
        key = sha(json.dumps([trajectories.to_json(v) for v in views], sort_keys=True) + (world_model or ""))
        store = RunStore(root, config=config, check_key=key)
        load_or_save(root / "train.jsonl", lambda: train)
        engine = run_search(target, llm, store, strategy=strategy, budget=budget, seed=seed,
                            concurrency=concurrency, tree=tree, request=request, progress=progress)
        test = load_or_save(root / "test.jsonl", lambda: trajectories.collect(spec, num_test, seed=seed + 100_000)) \
            if num_test else []
        test_views = (views_of(test) if deck == "open" else closed_views(test)) if test else []
        limits = None if box is None else dataclasses.replace(box.limits, wall_s=TEST_CHECK_SECONDS,
                                                              cpu_s=TEST_CHECK_SECONDS)
        held_out = test_report(engine, store, inference_checker(test_views, world_model=world_model, sandbox=box,
                                                                 limits=limits, kind=kind)) if test_views else None
    result = result_of(engine, store, config, held_out, time.monotonic() - start)
    run_report.write_outputs(store, result)
    return result


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


def _validate(*, deck: str, world_model: str | None, strategy: str, budget: int, num_train: int, num_test: int,
              concurrency: int, hidden: str, max_example_chars: int | None) -> None:
    if deck not in ("open", "closed"):
        raise UsageError(f"synthesize_inference: deck must be 'open' or 'closed', got {deck!r}")
    if hidden not in ("history", "state"):
        raise UsageError(f"synthesize_inference: hidden must be 'history' or 'state', got {hidden!r}")
    if hidden == "state" and deck == "closed":
        raise UsageError("synthesize_inference: the closed deck samples hidden histories (its checks replay them "
                         "to the end of each game); the hidden-state variant is open deck only")
    if deck == "open" and not world_model:
        raise UsageError("synthesize_inference: an open-deck inference function is written for a world model: "
                         "pass world_model (the source of a synthesized one, e.g. a run's best_program.py)")
    if strategy not in STRATEGIES:
        raise UsageError(f"synthesize_inference: unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    for name, value, low in (("budget", budget, 1), ("num_train", num_train, 1), ("num_test", num_test, 0),
                             ("concurrency", concurrency, 1),
                             ("max_example_chars", 1 if max_example_chars is None else max_example_chars, 1)):
        if value < low:
            raise UsageError(f"synthesize_inference: {name} must be >= {low}, got {value}")


__all__ = ["Deck", "closed_views", "synthesize_inference"]
