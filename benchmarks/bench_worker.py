"""What containment costs: a CWM agent planning in a hardened worker against the same agent in-process.

Plays the same positions (the first moves of a few seeded random tic-tac-toe games) with
  * in-process: ``CWMAgent`` on the dict-state model (tests/data/planners/ttt_model.py) with every model
    call under the 2 s per-call budget (how ``cwm:`` agents planned before they were contained, and what
    ``--trust`` gives),
  * in-process, bare: the same without the per-call budget (the floor: the search alone),
  * worker: ``WorkerAgent``, the model in a sandbox session (no per-call guard: the move's CPU budget is
    timed from outside),
at 1,000 simulations per move, taking turns position by position, best of --repeats, in CPU seconds of this
process and every process under it (``cwm.sandbox.watch.tree_cpu``: the worker's search runs in another
process, and wall time would measure the machine's load). Prints seconds per move and the ratios, and what starting a
worker costs once per match (fork, loading the model, the first message).

    python benchmarks/bench_worker.py [--sims 1000] [--rollouts 1 10] [--repeats 5]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pyspiel

from cwm import games, model
from cwm.agents import CWMAgent
from cwm.agents.worker import WorkerAgent
from cwm.sandbox import load_source
from cwm.sandbox.budget import call_budget
from cwm.sandbox.watch import tree_cpu
from planners import SearchConfig

MODEL = Path(__file__).resolve().parent.parent / "tests" / "data" / "planners" / "ttt_model.py"


def positions(count: int, game_name: str = "tic_tac_toe") -> list[pyspiel.State]:
    """Decision states from seeded random openings of ``game_name`` (0 to 3 random moves; chance outcomes are
    drawn by their probabilities and not counted, so every state returned is a player's decision)."""
    game = pyspiel.load_game(game_name)
    rng = np.random.default_rng(0)
    out: list[pyspiel.State] = []
    while len(out) < count:
        state = game.new_initial_state()
        _resolve_chance(state, rng)
        for _ in range(int(rng.integers(0, 4))):
            state.apply_action(int(rng.choice(state.legal_actions())))
            _resolve_chance(state, rng)
        out.append(state)
    return out


def _resolve_chance(state: pyspiel.State, rng: np.random.Generator) -> None:
    """Plays chance outcomes (by their probabilities) until a player's decision or the end."""
    while state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(outcomes, p=np.asarray(probs) / sum(probs))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--rollouts", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--positions", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    source = MODEL.read_text()
    module = load_source(source, name="ttt_model")
    codec = model.ActionCodec.from_game(games.load_game("tic_tac_toe"))
    states = positions(args.positions)
    for rollouts in args.rollouts:
        config = SearchConfig(num_simulations=args.sims, rollouts=rollouts)
        guarded = CWMAgent(model.WorldModel(module, codec=codec, name="ttt", guard=call_budget(2.0)),
                           "tic_tac_toe", config, seed=0)
        bare = CWMAgent(model.WorldModel(module, codec=codec, name="ttt"), "tic_tac_toe", config, seed=0)
        worker = WorkerAgent({"model.py": source}, "tic_tac_toe", config, name="ttt", seed=0)
        best = {"guarded": [math.inf] * len(states), "bare": [math.inf] * len(states),
                "worker": [math.inf] * len(states)}
        start_costs = []
        for _ in range(args.repeats):
            for i, state in enumerate(states):
                for name, agent in (("guarded", guarded), ("bare", bare), ("worker", worker)):
                    if name == "worker":  # a fresh worker per position, started before the clock runs
                        worker.reset()
                        t0 = tree_cpu()
                        worker._open()
                        start_costs.append(tree_cpu() - t0)
                    else:
                        agent.reset()
                    t0 = tree_cpu()
                    agent.step(state.clone())
                    best[name][i] = min(best[name][i], tree_cpu() - t0)
        worker.close()
        per_move = {k: sum(v) / len(v) for k, v in best.items()}
        print(f"{args.sims} simulations, {rollouts} rollout(s) per leaf, {len(states)} positions, best of "
              f"{args.repeats}:")
        for name, label in (("bare", "in-process, no per-call budget"),
                            ("guarded", "in-process, 2 s per-call budget (before containment; --trust)"),
                            ("worker", "hardened worker")):
            print(f"  {label:62} {per_move[name] * 1e3:8.1f} ms per move")
        print(f"  worker / in-process with budget: {per_move['worker'] / per_move['guarded']:.3f}  "
              f"(worker / bare: {per_move['worker'] / per_move['bare']:.3f})")
        print(f"  starting a worker (once per match): median {sorted(start_costs)[len(start_costs) // 2] * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
