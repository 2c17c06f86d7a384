"""ISMCTS speed on a synthesized-style Leduc model with its inference function, against OpenSpiel's Python
ISMCTSBot on the C++ game, at equal settings (simulations, rollouts per leaf, UCT constant 2).

Simulations per CPU second (of this process and every process under it, ``cwm.sandbox.watch.tree_cpu``: the
contained bundle's worker included; wall time would measure the machine's load and the worker's scheduling)
of one move's search, best of --repeats, at two Leduc decisions (right after the
deal, and in round 2 after some betting), for
  * OpenSpiel's Python ISMCTSBot on the C++ leduc_poker, resampling with ``resample_from_infostate`` (the
    baseline of every ratio);
  * ours (planners.ISMCTS) on the same C++ game with the same resampling;
  * ours on the hand-written reference model (tests/data/reference/leduc_poker_model.py, a dict-state model
    written the way an LLM writes one) with the reference inference function
    (tests/data/reference/leduc_poker_inference.py) through ``inference_sampler``: bare, and under the 2 s
    per-call budget trusted bundles and cwm:FILE agents run with;
  * the same model and inference as a contained bundle: a ``WorkerAgent`` move, timed end to end from this
    process (the pipe round trip and the worker's resync included; the worker already started).

With --profile it also prints where a simulation of ours on the model spends its time.

    python benchmarks/bench_ismcts.py [--sims 1000] [--rollouts 1] [--repeats 5] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import math
import pstats
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts as os_ismcts
from open_spiel.python.algorithms import mcts as os_mcts

from cwm import games, model
from cwm.agents import HistoryTracker, PlayerView, inference_sampler
from cwm.agents.specs import Settings, make_agent
from cwm.bundle import export_bundle
from cwm.contract import INFERENCE_API
from cwm.games import trajectories
from cwm.sandbox import load_source
from cwm.sandbox.budget import call_budget
from cwm.sandbox.watch import cpu_per_call
from planners import ISMCTS
from planners.config import SearchConfig

REFERENCE = Path(__file__).resolve().parent.parent / "tests" / "data" / "reference"
STATES = {"after the deal": [0, 3], "round 2, after betting": [0, 3, 2, 1, 4, 2]}  # players 0 and 1 to act


def best_rates(searches: dict[str, Callable[[], object]], sims: int, repeats: int) -> dict[str, float]:
    """Simulations per CPU second (this process and its descendants) of each search, best of ``repeats``, the
    searches taking turns in each repeat."""
    best = dict.fromkeys(searches, math.inf)
    for _ in range(repeats):
        for name, search in searches.items():
            best[name] = min(best[name], cpu_per_call(search))
    return {name: sims / t for name, t in best.items()}


def openspiel_bot(game: pyspiel.Game, sims: int, rollouts: int) -> os_ismcts.ISMCTSBot:
    rs = np.random.RandomState(0)
    bot = os_ismcts.ISMCTSBot(game, os_mcts.RandomRolloutEvaluator(rollouts, rs), 2.0, sims, random_state=rs)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(
        player, pyspiel.UniformProbabilitySampler(int(rs.randint(2**31)), 0.0, 1.0)))
    return bot


def reference_parts(guarded: bool) -> tuple[model.WorldModel, Callable[..., list[str]]]:
    game = games.load_game("leduc_poker")
    guard = {"guard": call_budget(2.0)} if guarded else {}
    wm = model.WorldModel(load_source((REFERENCE / "leduc_poker_model.py").read_text(), name="leduc_model"),
                          codec=model.ActionCodec.from_game(game), name="leduc_model", **guard)
    inference = load_source((REFERENCE / "leduc_poker_inference.py").read_text(), name="leduc_inference",
                                  api=INFERENCE_API)
    return wm, inference.resample_history


def view_of(wm: model.WorldModel, state: pyspiel.State) -> PlayerView:
    tracker = HistoryTracker(games.resolve("leduc_poker"), state.current_player())
    tracker.sync(state)
    legal = [state.action_to_string(state.current_player(), a) for a in state.legal_actions()]
    return PlayerView(wm, tracker.events, state.current_player(), legal)


def contained_agent(config: SearchConfig, out: Path) -> object:
    bundle = export_bundle(out / "leduc", game="leduc_poker", model_source=(REFERENCE / "leduc_poker_model.py").read_text(),
                           train=trajectories.collect("leduc_poker", 3, seed=0),
                           extra_sources={"inference.py": (REFERENCE / "leduc_poker_inference.py").read_text()})
    return make_agent(f"cwm:{bundle}", "leduc_poker", settings=Settings(search=config), seed=0)


def row(label: str, state: pyspiel.State, args: argparse.Namespace, agent: object) -> dict[str, float]:
    game = state.get_game()
    config = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts, uct_c=2.0)
    bare, guarded = reference_parts(False), reference_parts(True)
    agent.step(state)  # type: ignore[attr-defined]  # the worker starts here, outside the timing
    rates = best_rates({
        "openspiel": lambda: openspiel_bot(game, args.sims, args.rollouts).step(state),
        "ours_cpp": lambda: ISMCTS(config, seed=0).search(state),
        "model": lambda: ISMCTS(config, sampler=inference_sampler(*bare), seed=0).search(view_of(bare[0], state)),
        "guarded": lambda: ISMCTS(config, sampler=inference_sampler(*guarded), seed=0).search(
            view_of(guarded[0], state)),
        "worker": lambda: agent.step(state),  # type: ignore[attr-defined]
    }, args.sims, args.repeats)
    base = rates["openspiel"]
    print(f"{label:24}" + "".join(f" {rates[k]:>10,.0f}" for k in rates))
    print(f"{'  ratio to OpenSpiel':24}" + "".join(f" {rates[k] / base:>9.2f}x" for k in rates))
    return rates


def profile(state: pyspiel.State, args: argparse.Namespace) -> None:
    wm, resample = reference_parts(False)
    config = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts)
    profiler = cProfile.Profile()
    profiler.enable()
    ISMCTS(config, sampler=inference_sampler(wm, resample), seed=0).search(view_of(wm, state))
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--rollouts", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    print(f"Leduc ISMCTS simulations/s at {args.sims} simulations, {args.rollouts} rollout(s) per leaf, UCT c=2, "
          f"best of {args.repeats}")
    print(f"{'state':24}" + "".join(f" {k:>10}" for k in ("OS py", "ours C++", "model", "model 2s", "worker")))
    game = pyspiel.load_game("leduc_poker")
    config = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts, uct_c=2.0)
    with tempfile.TemporaryDirectory() as tmp:
        agent = contained_agent(config, Path(tmp))
        try:
            for label, history in STATES.items():
                state = game.new_initial_state()
                for a in history:
                    state.apply_action(a)
                row(label, state, args, agent)
                if args.profile:
                    profile(state, args)
        finally:
            agent.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
