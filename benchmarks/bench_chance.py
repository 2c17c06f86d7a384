"""CPU per move of cwm's MCTS on the shipped real synthesis of backgammon, with chance-outcome lists checked
once per distinct list (``cwm.value_rules.chance_outcomes``'s memo) against checked in full at every chance
node (the baseline), measured in the same run on the same states and seeds, in alternating runs after a
warm-up pass, with the number of lists each mode checked in full (which does not depend on the machine).

The model is the program of the shipped real backgammon recording (``cwm/data/recordings/real/
backgammon.jsonl``), loaded in this process (``trusted``: a benchmark of the planner's own work, not of the
sandbox). Times are CPU seconds of this process (``time.process_time``), so other work on the machine does
not enter them.

    python benchmarks/bench_chance.py [--sims 10] [--rollouts 10] [--moves 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
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


def timed(states: list, config: SearchConfig, remembered: bool) -> tuple[float, int]:
    """CPU seconds per move, and the chance lists checked in full, in one mode (the memo emptied first)."""
    full, counted = value_rules._check_chance, [0]

    def check(value):  # counts the full checks; the memo off means every list goes here
        counted[0] += 1
        return full(value)

    value_rules._CHECKED_CHANCE.clear()
    value_rules._check_chance = check
    memo = value_rules.chance_outcomes
    if not remembered:
        value_rules.chance_outcomes = check
    try:
        return cpu_per_move(states, config), counted[0]
    finally:
        value_rules._check_chance, value_rules.chance_outcomes = full, memo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=10)
    parser.add_argument("--rollouts", type=int, default=10)
    parser.add_argument("--moves", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each mode, alternating (default 3)")
    args = parser.parse_args()
    wm = backgammon_model()
    config = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts)
    states = decision_states(wm, args.moves)
    timed(states, config, True)  # a warm-up pass: the model's own caches filled before either mode is timed
    times: dict[bool, list[float]] = {True: [], False: []}
    checks: dict[bool, int] = {}
    for r in range(args.repeats):
        for remembered in ((False, True) if r % 2 == 0 else (True, False)):  # alternate which mode goes first
            cpu, checks[remembered] = timed(states, config, remembered)
            times[remembered].append(cpu)
    ratios = [a / b for a, b in zip(times[False], times[True])]
    print(f"backgammon (shipped real synthesis), MCTS {args.sims} x {args.rollouts}, {len(states)} moves, "
          f"{args.repeats} alternating runs of each mode, CPU s/move:")
    for remembered, name in ((False, "every chance list checked in full"), (True, "checked once per distinct list")):
        print(f"  {name:34s}: {_mean_se(times[remembered])}  ({checks[remembered]:,} full checks a run)")
    print(f"  ratio full / remembered, per run pair: {', '.join(f'{x:.2f}' for x in ratios)} "
          f"(mean {statistics.fmean(ratios):.2f})")


def _mean_se(values: list[float]) -> str:
    se = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else float("nan")
    return f"{statistics.fmean(values):.3f} ± {se:.3f}"


if __name__ == "__main__":
    main()
