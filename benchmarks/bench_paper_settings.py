"""Per-move time at the paper's settings (1,000 simulations, 10 random rollouts per leaf) on its long games,
for each kind of agent, in one run, with the projected cost of the paper's protocol.

For backgammon (GT-MCTS) and gin rummy (GT-ISMCTS), timed on the same decision states (spread over one
random game, ``cwm.arena.cost.decision_states``):
  * cwm's Python planner on the C++ ground truth (``gt-mcts-py`` / ``gt-ismcts-py``): the baseline of
    every ratio;
  * OpenSpiel's C++ ``MCTSBot`` / ``ISMCTSBot`` through ``gt-mcts`` / ``gt-ismcts`` (``cwm.agents.native``);
  * a CWM agent (``planners.CWMAgent``, in this process) on the oracle model (``cwm.games.oracle``: the contract
    served by replaying the ground truth, so it stands for a correct synthesized model at the speed of a
    history replay); in gin rummy its inference draws the engine's ``resample_from_infostate`` world and
    replays it into the model (a correct inference function at the speed of one replay).

The protocol is 100 matches per pairing over both seats; an agent's projected share is 100 matches times
half a match's decisions (the mean of five random games) times its per-move time, on one core, on 2 cores
and on a 64-core Ray cluster (a match per core; projection, not measured). A pairing costs the sum of
its two agents' shares; the full protocol of a game (the CWM agent against random and against the
C++ ground-truth planner) is printed after its table.

With ``--probe-sims N`` every agent searches N simulations and its time is scaled linearly to ``--sims``
(as ``cwm arena``'s cost estimate does): a projection for games where timing the full search of every
agent would take too long; the output says so.

    python benchmarks/bench_paper_settings.py [--moves 2] [--sims 1000] [--rollouts 10] [--probe-sims N]
        [--games backgammon,gin_rummy]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from cwm import games
from cwm.agents import CWMAgent, inference_sampler
from cwm.agents.specs import Settings, make_agent
from cwm.arena import cost
from cwm.games.oracle import oracle_model
from planners.config import SearchConfig

MATCHES = 100  # the paper's protocol: 100 matches per pairing, over both seats
CORES = (1, 2, 64)


class _RealWorld:
    """A gin-rummy inference for the oracle model: the engine's world for the state being searched, replayed
    as action strings (the benchmark sets ``state`` before each move)."""

    def __init__(self) -> None:
        self.state: pyspiel.State | None = None

    def __call__(self, events: Any, player: int, seed: int) -> list[str]:
        assert self.state is not None
        world = self.state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0))
        replay, strings = world.get_game().new_initial_state(), []
        for action in world.history():
            strings.append(replay.action_to_string(replay.current_player(), action))
            replay.apply_action(action)
        return strings


def agents(game: str, config: SearchConfig) -> dict[str, tuple[Any, Callable[[pyspiel.State], None]]]:
    """Label -> (agent, what to tell it before each timed move)."""
    perfect = games.resolve(game).perfect_information
    kind = "gt-mcts" if perfect else "gt-ismcts"
    settings = Settings(search=config)
    found: dict[str, tuple[Any, Callable[[pyspiel.State], None]]] = {
        f"{kind}-py (cwm Python)": (make_agent(f"{kind}-py", game, settings=settings, seed=0), lambda s: None),
        f"{kind} (OpenSpiel C++)": (make_agent(kind, game, settings=settings, seed=0), lambda s: None),
    }
    model = oracle_model(game)
    if perfect:
        found["cwm on the oracle model"] = (CWMAgent(model, game, config, seed=0), lambda s: None)
    else:
        world = _RealWorld()
        agent = CWMAgent(model, game, config, sampler=inference_sampler(model, world), seed=0)
        found["cwm on the oracle model"] = (agent, lambda s: setattr(world, "state", s))
    return found


def time_per_move(agent: Any, before: Callable[[pyspiel.State], None], states: list[pyspiel.State]) -> float:
    total = 0.0
    for state in states:
        before(state)
        start = time.process_time()
        agent.step(state.clone())
        total += time.process_time() - start
    return total / len(states)


def protocol_cpu(length: float, *, cwm: float, ground_truth: float) -> float:
    """CPU seconds of the paper's planner pairings of one game: the CWM agent against random and against the
    ground-truth planner, ``MATCHES`` matches each; a seat plays half a match's ``length`` decisions, and
    random's moves cost nothing next to a search."""
    return MATCHES * length / 2 * (2 * cwm + ground_truth)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--moves", type=int, default=2, help="timed decisions per agent and game (default 2)")
    p.add_argument("--sims", type=int, default=1000)
    p.add_argument("--rollouts", type=int, default=10)
    p.add_argument("--probe-sims", type=int, default=None, help="time at this many simulations, scaled to --sims")
    p.add_argument("--games", default="backgammon,gin_rummy")
    args = p.parse_args()
    searched = args.probe_sims or args.sims
    config = SearchConfig(num_simulations=searched, rollouts=args.rollouts)
    scale = args.sims / searched
    how = f" (timed at {searched} simulations and scaled x{scale:g})" if scale != 1 else ""
    print(f"{args.sims} simulations{how}, {args.rollouts} rollouts per leaf, {args.moves} timed moves each; "
          f"protocol: {MATCHES} matches per pairing (both seats); CPU seconds (time.process_time)")
    for game in args.games.split(","):
        loaded = games.load_game(game)
        plays = [cost.decision_states(loaded, np.random.default_rng([7, i])) for i in range(cost.PROBE_GAMES)]
        length = float(np.mean([len(p) for p in plays]))
        picks = np.linspace(len(plays[0]) // 8, len(plays[0]) * 3 // 4, args.moves).astype(int)
        states = [plays[0][i] for i in picks]
        print(f"\n{game}: ~{length:.0f} decisions a match (random play); states at decisions {[int(i) for i in picks]}")
        print("| agent | s/move | vs Python | protocol CPU | wall " + " | wall ".join(f"{c} cores" for c in CORES[1:]) + " |")
        print("|---|---|---|---|" + "---|" * (len(CORES) - 1))
        baseline = None
        times = {}
        for label, (agent, before) in agents(game, config).items():
            per_move = time_per_move(agent, before, states) * scale
            baseline = baseline or per_move
            times[label] = per_move
            share = MATCHES * length / 2 * per_move
            walls = " | ".join(cost.duration(share / c) for c in CORES[1:])
            print(f"| {label} | {per_move:.2f} | {per_move / baseline:.2f}x | {cost.duration(share)} | {walls} |",
                  flush=True)
        cwm, native = times["cwm on the oracle model"], list(times.values())[1]
        total = protocol_cpu(length, cwm=cwm, ground_truth=native)
        print(f"full protocol (cwm against random and against {list(times)[1]}): CPU {cost.duration(total)}, wall "
              + ", ".join(f"{cost.duration(total / c)} on {c} cores" for c in CORES[1:]))


if __name__ == "__main__":
    main()
