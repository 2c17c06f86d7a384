"""Inference synthesis end to end: open deck (an inference function for a given world model) and closed deck
(a world model and its inference function written together from one player's view).

``synthesize_inference`` records the training games, runs the same refinement loop as world-model synthesis
(Thompson-sampled tree search or a conversation, resumable, every prompt, reply, program and report saved),
and measures the best program's inference accuracy on held-out games of random play. The paper's Table 1
(open deck) and Table 2 (closed deck) report exactly these accuracies.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from cwm import games
from cwm.games import trajectories
from cwm.games.trajectories import views_of
from cwm.llm import Client
from cwm.sandbox.checkers import inference_checker
from cwm.synthesis import report as run_report
from cwm.synthesis.engine import Engine, Progress
from cwm.synthesis.inference_target import inference_target, joint_target
from cwm.synthesis.loop import run_search
from cwm.synthesis.runs import games_key, load_or_save, open_store, result_of, sandbox_or_none, test_report
from cwm.synthesis.settings import SynthesisSettings, settings_from
from cwm.synthesis.store import RunStore, sha
from cwm.synthesis.target import Target
from cwm.synthesis.types import SynthesisResult
from cwm.synthesis.world_model import TEST_CHECK_SECONDS
from cwm.types import CheckReport, ClosedTrajectory, Trajectory, UsageError

Deck = Literal["open", "closed"]


def closed_views(items: Sequence[Trajectory]) -> list[ClosedTrajectory]:
    """Closed-deck training data: game ``i`` seen from player ``i mod N``'s seat only (every seat appears)."""
    return [trajectories.closed_view(t, i % t.num_players) for i, t in enumerate(items)]


def synthesize_inference(game: str | games.GameSpec, llm: Client, settings: SynthesisSettings | None = None, *,
                         run_dir: str | Path, world_model: str | None = None, rules: str | None = None,
                         progress: Progress | None = None, **legacy: Any) -> SynthesisResult:
    """Synthesises an inference function (``settings.deck="open"``, for the world model ``world_model``) or a world
    model with its inference function (``settings.deck="closed"``, the joint target), and measures it on
    held-out games.

    Args:
      game: the game (registry name, OpenSpiel string or spec).
      llm: the LLM client.
      settings: as in ``synthesize_world_model`` (``SynthesisSettings.of("inference", ...)``), and: ``deck``
        (``open``: every player's view and the real histories of the training games are known, and the world
        model is given; ``closed``: each training game only from one player's seat), ``hidden`` (what the
        function samples: ``history``, ``resample_history``, the default, or ``state``, ``resample_state``, open
        deck only and weaker as the state need not be reachable), ``num_test`` (held-out games of random play,
        default 100) and ``max_example_chars`` (whole player views listed in the prompt while they fit,
        default 40,000).
      run_dir: where everything is saved; an interrupted run resumes without repeating LLM calls.
      world_model: the world model's source (open deck; required there).
      rules: the rules text (default: the game's registered rules).
      progress: called with the engine after each processed call.
      legacy: the former keyword arguments (``deck=``, ``budget=``, ...), deprecated: each is the setting of
        that name.

    Returns:
      The ``SynthesisResult`` (``target`` is ``inference`` or ``joint``; its accuracies are inference
      accuracies: the fraction of inference checks passed).

    Raises:
      UsageError: a setting out of range, or an open deck without a world model (checked before ``run_dir`` is
        touched).
    """
    start = time.monotonic()
    settings = settings_from("inference", settings, legacy, "synthesize_inference")
    if settings.deck == "open" and not world_model:
        raise UsageError("synthesize_inference: an open-deck inference function is written for a world model: "
                         "pass world_model (the source of a synthesized one, e.g. a run's best_program.py)")
    spec = games.resolve(game)
    train = trajectories.collect_covering(spec, settings.num_train, seed=settings.seed, pool=settings.train_pool)
    root = Path(run_dir)
    with sandbox_or_none(settings.isolate) as box:
        target, views = _target(spec, rules, train, world_model, settings, box)
        config = _config(target, spec, llm, settings, rules or games.rules_text(spec), world_model)
        store = open_store(root, config, settings, check_key=games_key(views, world_model or ""))
        load_or_save(root / "train.jsonl", lambda: train)
        engine = run_search(target, llm, store, settings, progress=progress)
        held_out, test_games = _held_out(engine, store, spec, world_model, settings, box)
    result = result_of(engine, store, config, held_out, time.monotonic() - start, test_games=test_games,
                       rules=games.rules_label(spec, rules or games.rules_text(spec)))
    run_report.write_outputs(store, result)
    return result


def _views(items: Sequence[Trajectory], deck: str) -> list[ClosedTrajectory]:
    """What the checks use: every player's view (open deck), or each game from one seat (closed deck)."""
    return views_of(items) if deck == "open" else closed_views(items)


def _target(spec: games.GameSpec, rules: str | None, train: list[Trajectory], world_model: str | None,
            settings: SynthesisSettings, box: Any) -> tuple[Target, list[ClosedTrajectory]]:
    """The target (open-deck inference or the joint one) with its checker, and the views it checks on."""
    text = rules or games.rules_text(spec)
    views = _views(train, settings.deck)
    kind = "state" if settings.hidden == "state" else None
    check = inference_checker(views, world_model=world_model, sandbox=box, kind=kind, terminal=_at_end(settings))
    if settings.deck == "open":
        return inference_target(text, train, world_model or "", check=check, hidden=settings.hidden,
                                max_example_chars=settings.max_example_chars), views
    return joint_target(text, views, check=check, max_example_chars=settings.max_example_chars), views


def _config(target: Target, spec: games.GameSpec, llm: Client, settings: SynthesisSettings, text: str,
            world_model: str | None) -> dict[str, Any]:
    """The run's resume key (``config.json``)."""
    s = settings
    return {"target": target.name, "deck": s.deck, "hidden": s.hidden, "game": spec.name, "strategy": s.strategy,
            "seed": s.seed, "model": llm.model, "num_train": s.num_train, "concurrency": s.concurrency,
            "tree": dataclasses.asdict(s.tree), "request": dataclasses.asdict(s.request),
            "rules_sha": sha(text)[:16], "prompt_hashes": target.prompt_hashes(), "budget": s.budget,
            "num_test": s.num_test, "world_model_sha": sha(world_model)[:16] if world_model else None,
            "max_example_chars": s.max_example_chars, "train_pool": s.train_pool}


def _held_out(engine: Engine, store: RunStore, spec: games.GameSpec, world_model: str | None,
              settings: SynthesisSettings, box: Any) -> tuple[CheckReport | None, int]:
    """The best program's report on the held-out games' views (``None`` without held-out games or a program),
    and how many games they are."""
    test = load_or_save(store.root / "test.jsonl", lambda: trajectories.collect(
        spec, settings.num_test, seed=settings.seed + 100_000)) if settings.num_test else []
    test_views = _views(test, settings.deck) if test else []
    if not test_views:
        return None, 0
    limits = None if box is None else dataclasses.replace(box.limits, wall_s=TEST_CHECK_SECONDS,
                                                          cpu_s=TEST_CHECK_SECONDS)
    kind = "state" if settings.hidden == "state" else None
    return test_report(engine, store, inference_checker(test_views, world_model=world_model, sandbox=box,
                                                        limits=limits, kind=kind, terminal=_at_end(settings))), len(test)


def _at_end(settings: SynthesisSettings) -> bool:
    """Whether the checks also look at the end of each game: a history inference is checked there (open deck
    as closed), so it must end the game paying the player its return; a state inference is not."""
    return settings.hidden != "state"


__all__ = ["Deck", "closed_views", "sandbox_or_none", "synthesize_inference"]
