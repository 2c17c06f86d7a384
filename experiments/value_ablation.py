"""Value-function ablation: the CWM agent with and without its bundle's value function, against random and the
ground-truth planner, in the real game, one table.

For each game (``--bundles GAME=PATH``: a bundle that went through ``cwm synthesize GAME --target value
--from PATH``), the agent ``value`` plans on the bundle as it is (MCTS with ``value.py`` at its leaves) and the
agent ``no-value`` on a copy without ``value.py`` (random rollouts at its leaves); both play ``random`` and
the ground-truth planner (``gt-mcts``, or ``gt-ismcts`` for hidden information), both seats
(``cwm.arena.tournament``). A bundle whose tournament kept no value plays the same agent twice, and the table
says so. Writes ``ablation.md``, ``ablation.json``, ``ablation.csv`` and ``record.json``; each game's
matches are under ``<game>/arena/``.

    python experiments/value_ablation.py --bundles tic_tac_toe=runs/ttt/bundle --out runs/value-ablation
    python experiments/value_ablation.py --bundles tic_tac_toe=B --matches 2 --sims 50 --executor inline
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import math
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository root importable for `experiments`
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from cwm.arena.plan import TournamentPlan
from cwm.executors import Executor, make_executor
from experiments import common
from experiments.arena_figure import opponents, parse_bundles

EXPERIMENT = "value_ablation"
WITH, WITHOUT = "value", "no-value"


@dataclasses.dataclass(frozen=True)
class ValueAblationConfig:
    """Everything that decides the table (written into ``config.json`` and ``record.json``).

    Attributes:
      bundles: ``(game, bundle directory)`` pairs.
      matches: arena games per pairing and seat order.
      sims: (IS)MCTS simulations per move; rollouts: random rollouts per leaf of the agent without a value.
      seed: seeds the tournaments.
      move_time_limit: seconds per move before a forfeit, or ``None``.
      executor: where the matches run.
      out: the run directory.
    """

    bundles: tuple[tuple[str, str], ...]
    matches: int
    sims: int
    rollouts: int
    seed: int
    move_time_limit: float | None
    executor: str
    out: str


def without_value(bundle: Path, target: Path) -> Path:
    """A copy of ``bundle`` without ``value.py`` (made once; the tournament's table stays), for the agent
    without a value."""
    from cwm.bundle.value import save_value

    if not (target / "manifest.json").is_file():
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(bundle, target)
        save_value(target, None, {"ablation": f"value.py removed from {bundle}"}, {"ablation": True})
    return target


def play(game: str, bundle: Path, config: ValueAblationConfig, out: Path, executor: Executor,
         progress: bool) -> list[dict[str, Any]]:
    """Both agents against each opponent, both seats; their pooled-seat summary rows."""
    from cwm import arena, games
    from cwm.agents.specs import Settings
    from cwm.arena import report as arena_report
    from planners.config import SearchConfig

    spec = games.resolve(game)
    bare = without_value(bundle, out / "no_value_bundle")
    opps = opponents(spec.name, None)
    results = arena.tournament(spec.name, [f"{WITH}=cwm:{bundle.resolve()}", f"{WITHOUT}=cwm:{bare.resolve()}", *opps], TournamentPlan(matches=config.matches, settings=Settings(search=SearchConfig(num_simulations=config.sims, rollouts=config.rollouts)), seed=config.seed, pairings=[(a, o) for a in (WITH, WITHOUT) for o in opps], move_time_limit=config.move_time_limit), out_dir=out / "arena", executor=executor, progress=progress)
    has_value = (bundle / "value.py").is_file()
    rows = [r for r in arena_report.summarize(results) if r["agent"] in (WITH, WITHOUT) and r["seat"] == "all"]
    rows.sort(key=lambda r: (r["agent"] != WITH, opps.index(r["opponent"])))
    # a mean over no matches is NaN: None keeps the JSON standard
    return [{"game": spec.name, "value_py": has_value}
            | {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in r.items()} for r in rows]


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """One line per game, agent and opponent (both seats pooled)."""
    lines = ["# CWM agent with and without its value function", "",
             "| game | value.py | agent | opponent | n | win | draw | loss | mean payoff [95% CI] |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        payoff = "n/a" if r.get("mean_payoff") is None else (
            f"{r['mean_payoff']:+.3f} [{r['payoff_lo']:+.3f}, {r['payoff_hi']:+.3f}]")
        lines.append(f"| {r['game']} | {'yes' if r['value_py'] else 'none kept'} | {r['agent']} | {r['opponent']} | "
                     f"{r['matches']} | {r['win_rate']:.2f} | {r['draw_rate']:.2f} | {r['loss_rate']:.2f} | {payoff} |")
    lines += ["", "`value`: MCTS with the bundle's value.py at its leaves; `no-value`: the same bundle without it "
              "(random rollouts). A bundle whose tournament kept no value plays the same agent twice."]
    return "\n".join(lines) + "\n"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=EXPERIMENT, description=__doc__.splitlines()[0])
    p.add_argument("--bundles", action="append", default=[], metavar="GAME=PATH", required=True,
                   help="a bundle that went through `cwm synthesize GAME --target value` (may be repeated)")
    p.add_argument("--matches", type=int, default=50, help="arena games per seat order (default 50)")
    p.add_argument("--sims", type=int, default=1000, help="(IS)MCTS simulations per move (default 1000)")
    p.add_argument("--rollouts", type=int, default=10, help="rollouts per leaf without a value (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seeds the tournaments (default 0)")
    p.add_argument("--move-time-limit", type=float, default=None, help="seconds per move before a forfeit")
    p.add_argument("--executor", default="local", help="inline | local | local:N | ray[:ADDRESS] (default local)")
    p.add_argument("--out", default=None, help="run directory (default runs/value_ablation-<UTC time>)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return common.script_main(parser(), _run, EXPERIMENT, argv)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    started = _dt.datetime.now(_dt.timezone.utc)
    for flag, value in (("--matches", args.matches), ("--sims", args.sims), ("--rollouts", args.rollouts)):
        if value < 1:
            raise common.ExperimentError(f"{flag} must be at least 1, got {value}")
    out = common.run_directory(args.out, EXPERIMENT)
    config = ValueAblationConfig(parse_bundles(args.bundles), args.matches, args.sims, args.rollouts, args.seed,
                                 args.move_time_limit, args.executor, str(out))
    for game, path in config.bundles:
        common.check_bundle(game, Path(path))
    executor = make_executor(args.executor)
    rows: list[dict[str, Any]] = []
    try:
        common.begin(out, config)
        for game, path in config.bundles:
            rows += play(game, Path(path), config, out / game, executor, progress=not args.quiet)
    finally:
        executor.close()
    (out / "ablation.md").write_text(markdown(rows), encoding="utf-8")
    common.write_json(out / "ablation.json", {"rows": rows})
    common.write_csv(out / "ablation.csv", rows)
    common.write_record(out, experiment=EXPERIMENT, config=config, argv=argv, llm={}, prompt_hashes={},
                        seeds={g: [config.seed] for g, _ in config.bundles}, results={"rows": rows},
                        started=started)
    print(f"table: {out / 'ablation.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
