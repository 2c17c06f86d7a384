"""`cwm run GAME`: the main job (collect -> synthesize -> export -> arena -> report), resumable by stage."""

from __future__ import annotations

import argparse
from pathlib import Path

from cwm import pipeline
from cwm.arena import report as arena_report
from cwm.arena import teams
from cwm.arena.plan import read_results
from cwm.arena.ratings import MOSTLY
from cwm.commands.arena import add_cost_flag, add_fallback_flag, fallback_verdict
from cwm.llm import SPEC_FORMS
from cwm.pipeline.twins import AUTO_CHECK_CPU_S, TWINS
from cwm.synthesis.report import accuracy_text
from cwm.text import counted


def register(sub: argparse._SubParsersAction) -> None:
    d = pipeline.RunConfig
    p = sub.add_parser("run", help="the main job: synthesize a world model, export it, play it in the arena")
    p.add_argument("game", help="registry name, OpenSpiel game string, or path/to/module.py:short_name")
    p.add_argument("--out", default=None, help="run directory (default runs/<game>-seed<S>)")
    p.add_argument("--llm", default=d.llm, help=f"{SPEC_FORMS} | auto (default: "
                   "Gemini when GEMINI_API_KEY/GOOGLE_API_KEY is set, else the recorded offline session)")
    p.add_argument("--strategy", choices=["tree", "conversation"], default=d.strategy)
    p.add_argument("--budget", type=int, default=d.budget, help=f"LLM-call budget (default {d.budget})")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--num-test", type=int, default=d.num_test,
                   help="held-out test games (default: a held-out set of 10,000 transitions, cached)")
    p.add_argument("--matches", type=int, default=d.matches, help=f"arena games per seat (default {d.matches})")
    p.add_argument("--sims", type=int, default=d.simulations, help=f"MCTS simulations per move (default {d.simulations})")
    p.add_argument("--rollouts", type=int, default=d.rollouts, help=f"rollouts per MCTS leaf (default {d.rollouts})")
    p.add_argument("--max-rollout-steps", type=int, default=None, metavar="K",
                   help="the arena planners' rollout cut-off: a rollout stops after K moves; 0: none, rollouts play "
                        "to the end (default: the game's, 10 for hanabi, whose full random playouts all score 0; "
                        "none for most games)")
    p.add_argument("--opponents", default=None, help="comma-separated agent specs (default: random and the "
                   "ground-truth planner, gt-mcts, or gt-ismcts for a hidden-information game)")
    p.add_argument("--executor", default=d.executor, help="local | local:N | inline | ray[:ADDRESS]")
    p.add_argument("--rules", default=None, metavar="spec|prose|FILE",
                   help="the rules in the prompts: spec (default), prose (the rulebook tier) or a rules file "
                        "(needed for games outside the registry)")
    p.add_argument("--max-prompt-tokens", type=int, default=None, help="refuse, unsent, a synthesis prompt "
                   "estimated above N tokens (default: the model's context window)")
    p.add_argument("--move-time-limit", type=float, default=d.move_time_limit,
                   help=f"CPU seconds per arena move before a timeout forfeit (default {d.move_time_limit:g})")
    p.add_argument("--trust", action="store_true",
                   help="plan on the synthesized model in this machine's arena processes instead of in hardened "
                        "workers: only for a model you have read")
    p.add_argument("--twins", choices=TWINS, default=d.twins,
                   help="the fast-twin stage: auto (default) replays the game's shipped fast-twin session when its "
                        f"equivalence check is projected within {AUTO_CHECK_CPU_S / 60:.0f} CPU-minutes; on: at any "
                        "cost, and with a live LLM has it write the twin; off: none. The CWM agent plans on the twin")
    p.add_argument("--no-twins", dest="twins", action="store_const", const="off", help="the same as --twins off")
    p.add_argument("--ppo-steps", type=int, default=d.ppo_steps, metavar="N",
                   help="PPO steps on the JAX twin of the game's shipped PPO session, whose policy then plays in "
                        f"the arena as ppo (default {d.ppo_steps:,}; 0: no PPO stage; needs the jax extra)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_cost_flag(p)
    add_fallback_flag(p)
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    config = pipeline.RunConfig(
        game=args.game, llm=args.llm, strategy=args.strategy, budget=args.budget, seed=args.seed,
        num_test=args.num_test, matches=args.matches, simulations=args.sims, rollouts=args.rollouts,
        opponents=None if args.opponents is None else tuple(o for o in args.opponents.split(",") if o),
        executor=args.executor, rules=args.rules,
        move_time_limit=args.move_time_limit, trust=args.trust, max_rollout_steps=args.max_rollout_steps,
        twins=args.twins, ppo_steps=args.ppo_steps)
    out = args.out or f"runs/{config.game.replace('/', '_').replace(':', '_')}-seed{config.seed}"
    report = pipeline.run(config, out, progress=not args.quiet, max_prompt_tokens=args.max_prompt_tokens,
                          yes=args.yes)
    s = report["synthesis"]
    test = accuracy_text(s["test_accuracy"], s.get("test_checked"), s.get("test_games"))
    print(f"{report['game']}: world-model synthesis {'solved' if s['solved'] else 'not solved'} in "
          f"{counted(s['llm_calls'], 'call')} (transition accuracy train {s['train_accuracy']:.4f}, test {test}); "
          f"LLM: {report['llm']}")
    inference = report["inference"]
    if inference is not None:
        test = accuracy_text(inference["test_accuracy"], inference.get("test_checked"),
                             inference.get("test_games"))
        print(f"  inference synthesis {'solved' if inference['solved'] else 'not solved'} in "
              f"{counted(inference['llm_calls'], 'call')} (inference accuracy train {inference['train_accuracy']:.4f}, "
              f"test {test})")
    for row in report["arena"]:
        if "team" in row:  # a cooperative game: team scores, out of the game's best
            print(f"  team {row['team']}: mean score {teams.score_cell(row)} over {row['deals']} deals")
        elif row["seat"] == "all":
            print(f"  {row['agent']} vs {row['opponent']}: " + ", ".join(
                f"{k} {row[k]:.2f}" for k in ("win_rate", "draw_rate", "loss_rate", "mean_payoff") if k in row))
    for c in report.get("arena_comparisons") or ():
        if "team" in c:
            print(f"  teams {c['team']} vs {c['other']} over {c['deals']} shared deals: "
                  f"{'higher' if c['detected'] else 'no difference detected'}")
        else:
            print(f"  paired, {c['agent']} vs {c['opponent']} over {c['matches']} matches ({c['pairs']} pairs): "
                  f"{c['verdict']}")
    if reference := teams.reference_line(report["game"]):
        print(f"  {reference}")
    on_policy = report["on_policy"]
    # a perfect transition accuracy with what it bounds, beside it (report.md says it too; empty otherwise)
    bound = pipeline.perfect_bound_note(on_policy.get("transitions"), on_policy.get("matches"))
    rates = ", ".join(f"{k.replace('_', ' ')} {on_policy[k]:.4f}{bound if k == 'transition_accuracy' else ''}"
                      for k in ("transition_accuracy", "inference_accuracy") if isinstance(on_policy.get(k), float))
    print(f"  on-policy, on its {on_policy['matches']} finished arena games: {rates}" if rates
          else "  on-policy: no finished arena game to check")
    for line in pipeline.posterior_lines(report["posterior"])[2:] if report.get("posterior") else []:
        print(f"  posterior {line.removeprefix('- ')}")
    _print_twins(report.get("twins") or {})
    print(f"report: {out}/report.md")
    pooled = [row for row in report["arena"] if row.get("seat") == "all"]
    moves, fell = (sum(int(row.get(k) or 0) for row in pooled) for k in ("searched_moves", "fallback_moves"))
    rate = fell / moves if moves else 0.0
    if any("team" in row for row in report["arena"]):  # team rows keep no agent's sampling record: the matches do
        played = list(read_results(Path(out) / "arena" / "matches.jsonl").values())
        rate = arena_report.fallback_rates(played).get(pipeline.CWM_LABEL, 0.0)
    return fallback_verdict("run", {pipeline.CWM_LABEL: rate} if rate > MOSTLY else {}, args.allow_fallback)


def _print_twins(twins: dict) -> None:
    """What the CWM agent planned on, and the twin stages that were skipped (why) or trained (what it cost)."""
    print(f"  the CWM agent planned on: {twins.get('planned_on', 'model')}")
    for what, key in (("fast twin", "fast"), ("PPO", "ppo")):
        record = twins.get(key) or {}
        if record.get("status") == "skipped":
            print(f"  {what}: skipped ({record['reason']})")
        elif record.get("status") == "trained":
            print(f"  {what}: {record['steps']:,} steps on the JAX twin in {record['cpu_s']:.0f} CPU s; plays as ppo")
