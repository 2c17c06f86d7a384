"""Random-play checks: uniformly random games inside a model through ``ModelState``, which enforces the
contract. All that is possible with closed-deck data, and part of every bundle's load-time check."""

from __future__ import annotations

import numpy as np

from cwm.checks.report import Tally
from cwm.model import WorldModel, model_traceback
from cwm.model_state import ModelState
from cwm.types import CheckFailure, CheckReport, ModelContractError


def random_play_checks(model: WorldModel, *, num_games: int = 10, seed: int = 0, max_steps: int = 10_000,
                       max_failures: int = 20) -> CheckReport:
    """Plays ``num_games`` uniformly random games inside ``model`` through ``ModelState``, which enforces
    the contract (a breach, a mutation or a state that is not JSON fails the game); each must also end
    within ``max_steps``. Every state reached is asked what the replay checks ask of a recorded one: its
    player, every player's observation (the terminal state's too), and its legal actions (chance nodes'
    too) and chance outcomes.

    Randomness: ``np.random.default_rng(seed)`` picks actions and samples chance outcomes.
    """
    rng = np.random.default_rng(seed)
    run = Tally(max_failures)
    passed = 0
    for g in range(num_games):
        problem, trace, history, breach = _random_game(model, rng, max_steps)
        if not problem:
            passed += run.ok("random_play")
            continue
        failure = CheckFailure("random_play", g, len(history), "random play", "terminal", None, problem, trace,
                               tuple(history), breach)
        run.fail(lambda f=failure: f, "random_play", breach=breach)  # type: ignore[misc]
    return run.report(passed, num_games)


def _random_game(model: WorldModel, rng: np.random.Generator, max_steps: int) -> tuple[str, str, list[str], bool]:
    history: list[str] = []
    try:
        state: ModelState = model.new_initial_state()
        for _ in range(max_steps):
            state.observations()  # every state's, the terminal one's too (as the replay checks them)
            if state.is_terminal():
                return "", "", history, False
            legal = state.legal_action_strings()  # at chance nodes too, where they are the possible outcomes
            if state.is_chance_node():
                outcomes = state.chance_outcome_strings()
                probs = np.array([p for _, p in outcomes])
                action = outcomes[rng.choice(len(outcomes), p=probs / probs.sum())][0]
            else:
                action = legal[rng.integers(len(legal))]
            state = state.child_from_string(action)
            history.append(action)
        return f"game did not end within {max_steps} steps", "", history, False
    except ModelContractError as e:
        return f"ModelContractError: {e}", _cause(e), history, True


def _cause(e: ModelContractError) -> str:
    cause = e.__cause__
    return model_traceback(cause) if cause is not None else ""
