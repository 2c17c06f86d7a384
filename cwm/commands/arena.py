"""`cwm arena`: a resumable tournament between agents on a ground-truth game."""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

from cwm import arena, games
from cwm.agents.specs import Settings, parse_agent_specs
from cwm.arena import cost, lock, report, teams
from cwm.arena.replay import recorded_deals_of
from cwm.arena.run import check_agents
from planners.config import SearchConfig


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("arena", help="play agents against each other (both seats, resumable)",
                       description="Plays every pair of agents in both seats, after printing its projected cost. "
                                   "Agents: random, gt-mcts, gt-ismcts (OpenSpiel's C++ search where the game "
                                   "allows), gt-mcts-py, gt-ismcts-py (cwm's Python search), cwm:MODEL.py|BUNDLE_DIR, cwm-selected:SELECTION_DIR, llm:CLIENT, "
                                   "llm+legal:CLIENT; "
                                   "NAME=SPEC labels an agent NAME in the results (mine=cwm:runs/ttt/bundle), "
                                   "else its label is the spec as typed. Re-running with the same --out "
                                   "resumes; matches are found by content (the game, the settings, each agent's "
                                   "fingerprint), so renaming an agent or moving its bundle replays nothing.")
    p.add_argument("game", help="registry name, OpenSpiel game string, or path/to/module.py:short_name")
    p.add_argument("--agents", required=True,
                   help="comma-separated agent specs, each [NAME=]SPEC "
                        "(e.g. random,gt-mcts,mine=cwm:runs/ttt/bundle)")
    p.add_argument("--matches", type=int, default=None,
                   help="matches per pairing and seat order, >= 1 (default 100; with --deals-from, one per deal)")
    p.add_argument("--sims", type=int, default=1000, help="MCTS/ISMCTS simulations per move, >= 1 (default 1000)")
    p.add_argument("--rollouts", type=int, default=10, help="random rollouts per leaf, >= 1 (default 10)")
    p.add_argument("--uct-c", type=float, default=2.0, help="UCT exploration constant (default 2.0)")
    p.add_argument("--max-rollout-steps", type=int, default=None,
                   help="the rollout cutoff: moves after which a rollout stops, scored by the value function "
                        "where there is one, else by its returns so far (a draw in a zero-sum game); the C++ "
                        "gt-mcts/gt-ismcts search then runs in Python (default: the game's maximum length, "
                        "else 10000)")
    p.add_argument("--leaf", choices=("value", "rollout"), default="value",
                   help="how an agent with a value function (a bundle's value.py) values a new leaf: value (the "
                        "value function, no rollout; default) or rollout (--rollouts random playouts, the ones "
                        "--max-rollout-steps cuts off scored by the value function)")
    p.add_argument("--llm-retries", type=int, default=3, help="LLM rethinks before a forfeit (default 3)")
    p.add_argument("--llm-examples", type=int, default=2,
                   help="example games shown to an LLM policy in its prompt (default 2)")
    p.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    p.add_argument("--move-time-limit", type=float, default=arena.DEFAULT_MOVE_TIME_S,
                   help=f"CPU seconds per move before a timeout forfeit, > 0 (default {arena.DEFAULT_MOVE_TIME_S:g}; "
                        f"a move still running three limits and 30 s later is ended too)")
    p.add_argument("--trust", action="store_true",
                   help="plan on cwm: models in this process (faster, no containment) instead of in hardened "
                        "workers: only for models you have read")
    p.add_argument("--deals-from", default=None, metavar="DIR",
                   help="deal match i of every table the deal of match i of the earlier tournament in DIR (its "
                        "matches.jsonl), so other settings play its cards; DIR's config.json must record the same "
                        "game; the deals are recorded in the settings (another list: other matches)")
    p.add_argument("--self-play", action="store_true", help="also play each agent against itself")
    p.add_argument("--seat-orders", choices=("rotations", "permutations"), default="rotations",
                   help="with more than two players, which seat orders of each table are played on a deal: the N "
                        "rotations (each agent in each seat once; default) or all N! permutations (also who "
                        "follows whom); with two players both are the two seat orders")
    add_fallback_flag(p)
    p.add_argument("--executor", default="local",
                   help="local (process pool, default), local:N, inline, ray or ray:ADDRESS")
    p.add_argument("--out", required=True, help="output folder (matches.jsonl, results.*)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_cost_flag(p)
    p.set_defaults(func=cmd_arena)


def add_cost_flag(p: argparse.ArgumentParser) -> None:
    """``--yes``: start a run whose cost estimate is over the threshold (``cwm.arena.cost.confirm``)."""
    p.add_argument("--yes", action="store_true",
                   help=f"start even when the projected wall time is over {cost.duration(cost.CONFIRM_WALL_S)} "
                        f"(without it such a run is refused, from a terminal or a script; the estimate is always "
                        f"printed)")


def add_fallback_flag(p: argparse.ArgumentParser) -> None:
    """``--allow-fallback``: exit 0 even when an agent fell back to random moves on most of its moves."""
    p.add_argument("--allow-fallback", action="store_true",
                   help="exit 0 even when an agent fell back to random moves on most of its moves (its results "
                        "are then a random player's under its name; the tables mark it either way)")


def fallback_verdict(command: str, rates: dict[str, float], allowed: bool) -> int:
    """Says (on stderr, a line per agent) which agents fell back on most of their moves; the exit status: 1
    when any did and ``allowed`` is false, else 0."""
    for label, rate in rates.items():
        print(f"cwm {command}: {'warning' if allowed else 'error'}: {label} fell back to a random move on "
              f"{100 * rate:.0f}% of its moves, so its results are not what its name says"
              f"{'' if allowed else ' (kept; --allow-fallback accepts them)'}", file=sys.stderr)
    return 1 if rates and not allowed else 0


def cmd_arena(args: argparse.Namespace) -> int:
    specs = parse_agent_specs(args.agents)
    labels = [s.label for s in specs]
    pairings = None
    if args.self_play:  # every table of the game's size with agents repeated, (a, a) ... (b, b) with two players
        pairings = list(itertools.combinations_with_replacement(labels, games.resolve(args.game).players))
    search = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts, uct_c=args.uct_c,
                          max_rollout_steps=args.max_rollout_steps, leaf=args.leaf)
    settings = Settings(search=search, llm_retries=args.llm_retries, llm_examples=args.llm_examples,
                        trust_models=args.trust)
    deals = None if args.deals_from is None else recorded_deals_of(Path(args.deals_from), args.game)
    matches = args.matches if args.matches is not None else len(deals) if deals is not None else 100
    plan = arena.TournamentPlan(matches=matches, settings=settings, seed=args.seed, pairings=pairings,
                                move_time_limit=args.move_time_limit, seat_orders=args.seat_orders,
                                deals=None if deals is None else deals[:matches])
    agents = [str(s) for s in specs]
    checked = check_agents(games.resolve(args.game).name, {s.label: str(s) for s in specs}, settings)  # before the
    # estimate; the tournament does not build them again
    lock.refuse_if_locked(args.out)  # before the estimate's probe moves: a second writer learns at once
    estimate = cost.estimate_tournament(args.game, agents, plan, executor=args.executor, out_dir=args.out)
    cost.confirm(estimate, yes=args.yes)
    start = time.perf_counter()
    with cost.cpu_meter() as used:
        results = arena.tournament(args.game, agents, plan, out_dir=args.out, executor=args.executor,
                                   progress=not args.no_progress, checked=checked)
    out = Path(args.out)
    cost.write_record(out / "cost.json", estimate, time.perf_counter() - start, used.cpu_s())
    print((out / "results.md").read_text(encoding="utf-8"), end="")
    if not teams.cooperative(args.game):  # a cooperative game's results are its team scores, printed above
        print("\nleaderboard (Bradley-Terry rating, bootstrap 95% interval):")
        print((out / "leaderboard.md").read_text(encoding="utf-8"), end="")
    forfeits = [(r, r.forfeit_seat) for r in results if r.forfeit_seat is not None]
    for r, seat in forfeits[:5]:
        print(f"forfeit: {r.seats[seat]} ({r.forfeit_kind}) in {r.key}: {r.reason[:300]}")
    print(f"{len(results)} matches of {games.resolve(args.game).name}; results in {out}/results.{{json,csv,md,png}}, "
          f"leaderboard.md; transcripts in {out}/transcripts (cwm replay, cwm view)")
    return fallback_verdict("arena", report.mostly_fallback(results), args.allow_fallback)
