"""The paper's PPO comparison: a PPO policy trained inside each game's CWM, against random, the ground-truth planner
and the CWM agent, in the real game, one table.

For each game: its bundle (``--bundles GAME=PATH``, else synthesized from the game's recorded session, or with
``--llm``, and exported, as ``arena_figure`` does), copied to ``<game>/bundle-ppo`` (a given bundle is never
changed); PPO trained inside the copy's model with the game's encoder (``--encoders GAME=FILE``, else the
bundle's ``encoder.py``; a game with neither is a row saying so) against random, ``--ppo-seeds`` seeds, the
best added to the copy (``cwm.ppo.bundle``, resumable under ``<game>/ppo``); then the policy (``ppo``) plays
``random``, the ground-truth planner (``gt-mcts``, or ``gt-ismcts`` for hidden information) and the CWM agent
on the same bundle (``cwm``: (IS)MCTS on the model), both seats (``cwm.arena.tournament``), each opponent
compared with the policy by the arena's paired analysis (``cwm.arena.compare``: interval, matches and pairs,
MDE, verdict). Writes
``ppo.md``, ``ppo.json``, ``ppo.csv`` and ``record.json``; each game's matches are under ``<game>/arena/``.

The defaults are small (tic-tac-toe, Leduc poker and quadranto: the games with shipped recordings; 20k steps
per seed, 2 seeds). Paper-scale settings (10M steps per game, 5 seeds, 1000 simulations, 50 matches per seat)::

    python experiments/ppo_table.py --encoders tic_tac_toe=enc/ttt.py,leduc_poker=enc/leduc.py \\
        --steps 10000000 --ppo-seeds 5 --sims 1000 --matches 50 --ppo-executor ray --out runs/ppo
    python experiments/ppo_table.py --games tic_tac_toe --encoders tic_tac_toe=enc/ttt.py --steps 512 \\
        --ppo-seeds 1 --matches 1 --sims 20 --executor inline --out runs/ppo-small        # seconds
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository root importable for `experiments`
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from cwm.executors import Executor, make_executor
from experiments import arena_figure, common, figure_report, imperfect

EXPERIMENT = "ppo_table"
GAMES = ("tic_tac_toe", "leduc_poker", "quadranto")  # the games whose sessions ship in cwm/data/recordings
PPO, CWM = "ppo", "cwm"


@dataclasses.dataclass(frozen=True)
class PPOTableConfig:
    """Everything that decides the table (written into ``config.json`` and ``record.json``).

    Attributes:
      figure: the bundles and arena settings, as ``arena_figure`` takes them (games, LLM, bundles, deck,
        recordings, seed, move time limit, cache, executor, out).
      encoders: ``(game, encoder file)`` pairs.
      steps, ppo_seeds, num_envs, rollout: the PPO runs (``cwm.ppo.train.TrainConfig``).
      ppo_executor: where the PPO seeds run.
    """

    figure: arena_figure.ArenaFigureConfig
    encoders: tuple[tuple[str, str], ...]
    steps: int
    ppo_seeds: int
    num_envs: int
    rollout: int
    ppo_executor: str


def parse_encoders(items: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``GAME=FILE`` items (each may be comma-separated) as ``(registry name, absolute path)`` pairs.

    Raises:
      ExperimentError: an item without ``=``, or a file that does not exist.
    """
    from cwm import games

    pairs = []
    for item in (part for text in items for part in text.split(",") if part.strip()):
        game, sep, path = item.partition("=")
        if not sep or not Path(path).is_file():
            raise common.ExperimentError(f"--encoders {item!r}: expected GAME=FILE with an existing file")
        pairs.append((games.resolve(game.strip()).name, str(Path(path).resolve())))
    return tuple(pairs)


def ppo_bundle_copy(bundle: Path, target: Path) -> Path:
    """A copy of ``bundle`` to train into (made once: a resumed run keeps its policy)."""
    if not (target / "manifest.json").is_file():
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(bundle, target)
    return target


def train(game: str, bundle: Path, encoder: str | None, config: PPOTableConfig, out: Path, executor: Executor,
          progress: bool, yes: bool = False) -> dict[str, Any]:
    """Trains PPO in ``bundle`` (in place: the copy), after its cost estimate (``cwm.ppo.bundle``; confirmed
    as ``cwm.arena.cost`` confirms); the best seed and its score in the model."""
    from cwm.arena import cost
    from cwm.bundle import load_bundle
    from cwm.ppo import bundle as ppo_bundle
    from cwm.ppo.train import TrainConfig

    loaded = load_bundle(bundle, game=game)
    source = ppo_bundle.training_source(loaded, encoder)
    base = TrainConfig(total_steps=config.steps, num_envs=config.num_envs, rollout=config.rollout,
                       minibatches=min(4, config.num_envs), recurrent=not loaded.spec.perfect_information)
    # ten evaluations over the run, of at most 200 games each
    train_config = dataclasses.replace(base, eval_every=max(1, base.updates // 10),
                                       eval_games=min(200, 4 * config.num_envs))
    seeds = list(range(config.figure.seed, config.figure.seed + config.ppo_seeds))
    estimate = ppo_bundle.estimate_training(source, train_config, seeds, out_dir=out, executor=executor,
                                            workers=cost.executor_workers(config.ppo_executor))
    cost.confirm_lines([f"{game} PPO {line}" for line in estimate.lines()], estimate.wall_s, yes=yes,
                       smaller="lower --steps or --ppo-seeds")
    best = ppo_bundle.train_bundle(loaded, source, train_config, seeds, out_dir=out, executor=executor,
                                   progress=progress)
    return {"best_seed": best.seed, "best_score_in_model": best.best_score, "steps": config.steps}


def play(g: common.GameConfig, bundle: Path, config: PPOTableConfig, out: Path, executor: Executor,
         progress: bool, yes: bool = False) -> list[dict[str, Any]]:
    """The policy against random, the ground-truth planner and the CWM agent, both seats, after the
    tournament's cost estimate (``cwm.arena.cost``); its rows, each with the arena's paired comparison of the
    policy and that opponent (``paired``: ``cwm.arena.report.paired_comparisons``, seat-swapped pairs on one
    deal; ``None`` when no pair was complete)."""
    from cwm import arena, games
    from cwm.agents.specs import Settings
    from cwm.arena import cost
    from cwm.arena import report as arena_report
    from planners.config import SearchConfig

    game = games.resolve(g.game).name
    opps = [*arena_figure.opponents(game, None), CWM]
    agents = [f"{PPO}=ppo:{bundle.resolve()}", f"{CWM}=cwm:{bundle.resolve()}", *opps[:-1]]
    plan = arena.TournamentPlan(matches=g.matches, seed=config.figure.seed,
                                move_time_limit=config.figure.move_time_limit,
                                settings=Settings(search=SearchConfig(num_simulations=g.sims, rollouts=g.rollouts)),
                                pairings=[(PPO, o) for o in opps])
    cost.confirm(cost.estimate_tournament(game, agents, plan, executor=config.figure.executor, out_dir=out),
                 yes=yes)
    results = arena.tournament(game, agents, plan, out_dir=out, executor=executor, progress=progress)
    rows = [r for r in arena_report.summarize(results) if r["agent"] == PPO and r["seat"] == "all"]
    rows.sort(key=lambda r: opps.index(r["opponent"]))
    paired = {c["opponent"]: c for c in arena_report.paired_comparisons(games.resolve(game), results)
              if c["agent"] == PPO}
    return [{"game": game} | arena_figure._clean(r) | {"paired": paired.get(str(r["opponent"]))} for r in rows]


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """One line per game and opponent (both seats pooled); a game not played says why."""
    lines = ["# PPO trained inside the CWM, in the real game", "",
             "| game | opponent | n | win | draw | loss | mean payoff [95% CI] | PPO steps |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("status"):
            lines.append(f"| {r['game']} | {r['status']} | | | | | | |")
            continue
        payoff = "n/a" if r.get("mean_payoff") is None else (
            f"{r['mean_payoff']:+.3f} [{r['payoff_lo']:+.3f}, {r['payoff_hi']:+.3f}]")
        lines.append(f"| {r['game']} | {r['opponent']} | {r['matches']} | {r['win_rate']:.2f} | "
                     f"{r['draw_rate']:.2f} | {r['loss_rate']:.2f} | {payoff} | {r['steps']} |")
    lines += ["", "Both seats pooled; the payoff interval is per match (normal approximation), not paired. "
              "`ppo`: the best seed's greedy policy (numpy, one network pass per move), trained against random "
              "inside the bundle's model; `cwm`: (IS)MCTS on the same model; `gt-mcts` / `gt-ismcts`: the same "
              "search on the real game."]
    return "\n".join(lines + paired_lines(rows)) + "\n"


def paired_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The policy's paired comparison with each opponent (``figure_report.paired_lines``, with the agent
    compared in the second column)."""
    return figure_report.paired_lines(rows, second="agent", cell=lambda r, c: str(c["agent"]))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=EXPERIMENT, description=__doc__.splitlines()[0])
    common.add_common_args(p, default_executor="local")
    p.add_argument("--bundles", action="append", default=[], metavar="GAME=PATH",
                   help="use (a copy of) this bundle for GAME instead of synthesizing one (may be repeated)")
    p.add_argument("--encoders", action="append", default=[], metavar="GAME=FILE",
                   help="the observation encoder to train GAME's policy with (default: the bundle's encoder.py)")
    p.add_argument("--steps", type=int, default=20_000, help="PPO environment steps per seed (default 20000; "
                                                             "the paper: 10M)")
    p.add_argument("--ppo-seeds", type=int, default=2, help="PPO seeds per game, the best kept (default 2; paper 5)")
    p.add_argument("--num-envs", type=int, default=64, help="games stepped together in training (default 64)")
    p.add_argument("--rollout", type=int, default=32, help="steps of each game per PPO update (default 32)")
    p.add_argument("--ppo-executor", default="local:1", help="where the PPO seeds run: local:1 (a worker process, "
                   "default: JAX never runs in the process that forks the arena's workers), local:N, ray[:ADDRESS], "
                   "inline (here: only with --executor inline)")
    p.add_argument("--move-time-limit", type=float, default=None, help="seconds per move before a forfeit")
    p.add_argument("--deck", choices=imperfect.DECKS, default="open", help="imperfect-information bundles: open "
                   "(world model, then inference; default) or closed (both together)")
    p.add_argument("--recordings", default=None, metavar="DIR", help="recorded sessions (default: cwm's)")
    p.add_argument("--yes", action="store_true", help="train and play even when a projected wall time is over the "
                   "threshold (refused without it, from a terminal or a script; the estimates are always printed)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return common.script_main(parser(), _run, EXPERIMENT, argv)


def _config(args: argparse.Namespace, out: Path) -> PPOTableConfig:
    for flag, value in (("--steps", args.steps), ("--ppo-seeds", args.ppo_seeds), ("--num-envs", args.num_envs),
                        ("--rollout", args.rollout)):
        if value < 1:
            raise common.ExperimentError(f"{flag} must be at least 1, got {value}")
    configs = common.game_configs(args, GAMES)
    figure = arena_figure.ArenaFigureConfig(configs, args.llm, arena_figure.parse_bundles(args.bundles), None,
                                            args.deck, args.recordings, args.first_seed, args.move_time_limit,
                                            args.cache, args.executor, str(out))
    return PPOTableConfig(figure, parse_encoders(args.encoders), args.steps, args.ppo_seeds, args.num_envs,
                          args.rollout, args.ppo_executor)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    started = _dt.datetime.now(_dt.timezone.utc)
    out = common.run_directory(args.out, EXPERIMENT)
    config = _config(args, out)
    llms = arena_figure.check_inputs(config.figure, out)
    executor, ppo_executor = make_executor(args.executor), make_executor(args.ppo_executor)
    rows: list[dict[str, Any]] = []
    runs: dict[str, Any] = {}
    try:
        common.begin(out, config)
        for game_config in config.figure.games:
            rows += _game(game_config, llms.get(game_config.game), config, out, (executor, ppo_executor), runs,
                          quiet=args.quiet, yes=args.yes)
    finally:
        executor.close()
        ppo_executor.close()
    (out / "ppo.md").write_text(markdown(rows), encoding="utf-8")
    common.write_json(out / "ppo.json", {"rows": rows, "ppo": runs})
    common.write_csv(out / "ppo.csv", rows)
    common.write_record(out, experiment=EXPERIMENT, config=config, argv=argv, llm={"synthesis_spec": args.llm},
                        prompt_hashes={}, seeds={c.game: [config.figure.seed] for c in config.figure.games},
                        results={"rows": rows, "ppo": runs}, started=started)
    print(f"table: {out / 'ppo.md'}")
    return 0


def _game(game_config: common.GameConfig, llm: Any, config: PPOTableConfig, out: Path,
          executors: tuple[Executor, Executor], runs: dict[str, Any], *, quiet: bool,
          yes: bool) -> list[dict[str, Any]]:
    """One game's rows: obtain its bundle, train PPO in a copy, play the arena (or a row saying why not)."""
    from cwm import games

    name = games.resolve(game_config.game).name
    if isinstance(llm, imperfect.NoRecording):
        return [llm.row()]
    game_dir = out / game_config.game
    bundle = ppo_bundle_copy(arena_figure.obtain_bundle(game_config, config.figure, game_dir, llm),
                             game_dir / "bundle-ppo")
    encoder_file = dict(config.encoders).get(name)
    if encoder_file is None and not (bundle / "encoder.py").is_file():
        return [{"game": name, "status": "no encoder (give --encoders GAME=FILE)"}]
    encoder = Path(encoder_file).read_text(encoding="utf-8") if encoder_file else None
    runs[name] = train(name, bundle, encoder, config, game_dir / "ppo", executors[1], progress=not quiet, yes=yes)
    rows = play(game_config, bundle, config, game_dir / "arena", executors[0], progress=not quiet, yes=yes)
    return [r | {"steps": config.steps} for r in rows]


if __name__ == "__main__":
    raise SystemExit(main())
