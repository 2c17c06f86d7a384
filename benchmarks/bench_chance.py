"""CPU per move of cwm's MCTS on the shipped real synthesis of backgammon, with chance-outcome lists checked
once per distinct list (``cwm.value_rules.chance_outcomes``'s memo) against checked in full at every chance
node (the baseline, measured in the same run on the same states and seeds).

The model is the program of the shipped real backgammon recording (``cwm/data/recordings/real/
backgammon.jsonl``), loaded in this process (``trusted``: a benchmark of the planner's own work, not of the
sandbox). Times are CPU seconds of this process (``time.process_time``), so other work on the machine does
not enter them.

    python benchmarks/bench_chance.py [--sims 10] [--rollouts 10] [--moves 3]
"""

from __future__ import annotations

import argparse
import time
from importlib import resources

from cwm import games, model, value_rules
from cwm.llm.replay import read_replay
from cwm.sandbox import load_source
from cwm.synthesis.extract import extract_code
from planners.config import SearchConfig
from planners.mcts import MCTS

FUNCTIONS = ("get_initial_state", "get_current_player", "get_legal_actions", "apply_action", "get_chance_outcomes",
             "get_observations", "get_rewards")


def backgammon_model() -> model.WorldModel:
    path = resources.files("cwm") / "data" / "recordings" / "real" / "backgammon.jsonl"
    reply = read_replay(str(path))[-1]["response"]["texts"][0]
    source = extract_code(reply, FUNCTIONS).candidates[-1]
    gt = games.load_game("backgammon")
    return model.WorldModel(load_source(source, name="backgammon_real"), codec=model.ActionCodec.from_game(gt),
                            name="backgammon_real")


def decision_states(wm: model.WorldModel, moves: int) -> list:
    """The first ``moves`` decision states of a seeded random game on the model."""
    import random

    rng, state, found = random.Random(0), wm.new_initial_state(), []
    while len(found) < moves and not state.is_terminal():
        if state.is_chance_node():
            state = state.child(rng.choice([a for a, _ in state.chance_outcomes()]))
            continue
        found.append(state)
        state = state.child(rng.choice(state.legal_actions()))
    return found


def cpu_per_move(states: list, config: SearchConfig) -> float:
    start = time.process_time()
    for i, state in enumerate(states):
        MCTS(config, seed=i).search(state)
    return (time.process_time() - start) / len(states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=10)
    parser.add_argument("--rollouts", type=int, default=10)
    parser.add_argument("--moves", type=int, default=3)
    args = parser.parse_args()
    wm = backgammon_model()
    config = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts)
    states = decision_states(wm, args.moves)
    memo = value_rules.chance_outcomes
    try:
        value_rules.chance_outcomes = value_rules._check_chance  # the baseline: every list checked in full
        full = cpu_per_move(states, config)
    finally:
        value_rules.chance_outcomes = memo
    value_rules._CHECKED_CHANCE.clear()
    remembered = cpu_per_move(states, config)
    print(f"backgammon (shipped real synthesis), MCTS {args.sims} x {args.rollouts}, {len(states)} moves, CPU s/move:")
    print(f"  every chance list checked in full : {full:.3f}")
    print(f"  checked once per distinct list    : {remembered:.3f}   ({full / remembered:.2f}x)")


if __name__ == "__main__":
    main()
