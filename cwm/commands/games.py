"""`cwm games`, `cwm collect`, `cwm check`: the registry, trajectories and checks from the command line."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from cwm import checks, games
from cwm.files import not_a_file
from cwm.games import generated, trajectories
from cwm.games.oracle import oracle_model
from cwm.sandbox import Limits, Sandbox, load_source, static_gate
from cwm.sandbox.checkers import inference_checker
from cwm.stats import perfect_score_note
from cwm.types import (
    CheckReport,
    ClosedTrajectory,
    ModelLoadError,
    Trajectory,
    TrajectoryFormatError,
    UsageError,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("games", help="list the registered games and their facts")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_games)
    gen = p.add_subparsers(dest="games_command", metavar="generate").add_parser(
        "generate", help="write a novel game drawn from a seed: engine module, rules in both tiers, facts")
    gen.add_argument("family", choices=list(generated.FAMILIES), help="the family of games to draw from")
    gen.add_argument("--seed", type=int, required=True, help="which game of the family (same seed, same files)")
    gen.add_argument("--out", required=True, help="folder to write the game into (created if missing)")
    gen.set_defaults(func=cmd_generate)

    p = sub.add_parser("collect", help="record trajectories of a ground-truth game as JSONL")
    p.add_argument("game", help="registry name, OpenSpiel game string, or path/to/module.py:short_name")
    p.add_argument("--n", type=int, default=5, help="number of games (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of game i is SEED+i (default 0)")
    p.add_argument("--deck", choices=["open", "closed"], default="open")
    p.add_argument("--player", type=int, default=0, help="whose view a closed deck keeps (default 0)")
    p.add_argument("--out", required=True, help="output JSONL file")
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("check", help="run the trajectory checks on a model file and print the report")
    p.add_argument("model", help="model source file (a .py module with the CWM functions, and an inference "
                                 "function for closed-deck trajectories), or `oracle`: the "
                                 "ground truth itself behind the contract, which must pass (a check of the "
                                 "checks on your game and trajectories)")
    p.add_argument("--game", required=True, help="the game the model is of (for action ids)")
    p.add_argument("--trajectories", required=True,
                   help="JSONL trajectories of that game: open-deck (the world-model checks), or one player's "
                        "closed-deck view (the joint checks: the model must define an inference function too)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--max-failures", type=int, default=3, help="failure reports printed per test type")
    p.add_argument("--per-call-s", type=float, default=Limits.per_call_s,
                   help=f"seconds one model call may run in the sandbox (default {Limits.per_call_s:g})")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run the model in this process, with no time or memory limit (trusted code only)")
    p.set_defaults(func=cmd_check)


def cmd_games(args: argparse.Namespace) -> int:
    specs = games.registered()
    if args.json:
        print(json.dumps([s.facts() | {"rules": list(games.rules_tiers(s))} for s in specs], indent=2))
        return 0
    # the columns as wide as their longest entry, so a long OpenSpiel string does not shift its row
    name_w = max([len("name"), *(len(s.name) for s in specs)])
    truth_w = max([len("ground truth"), *(len(s.openspiel) for s in specs)])
    header = (f"{'name':{name_w}} {'ground truth':{truth_w}} {'pl':>2} {'information':11} {'chance':6} {'novel':5} "
              f"{'asym':4} {'outcome':13} rules (--rules)")
    print(header)
    print("-" * len(header))
    for s in specs:
        print(f"{s.name:{name_w}} {s.openspiel:{truth_w}} {s.players:>2} {s.information:11} "
              f"{'yes' if s.stochastic else 'no':6} {'yes' if s.novel else 'no':5} {'yes' if s.asymmetric else 'no':4} "
              f"{s.outcome:13} "
              f"{','.join(games.rules_tiers(s))}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    game = generated.generate(args.family, args.seed, args.out)
    module = Path(args.out) / f"{game.name}.py"
    print(f"wrote {game.family} game {game.name} (seed {game.seed}) to {args.out}: {', '.join(game.files)}")
    print(f"use it as {module}:{game.name} (e.g. cwm run {module}:{game.name} --rules prose)")
    return 0


def cmd_collect(args: argparse.Namespace) -> int:
    spec = games.resolve(args.game)
    if args.deck == "closed" and not 0 <= args.player < spec.players:
        raise UsageError(f"--player {args.player} is not a player of {spec.name} (0..{spec.players - 1})")
    missing = _missing_folders(Path(args.out))
    if missing and missing[0].parent == Path(missing[0].anchor):
        raise UsageError(f"--out {args.out}: {missing[0]} does not exist, and cwm does not create folders at the "
                         f"top of the file system (a typo?); create it first")
    items: list = trajectories.collect(spec, args.n, seed=args.seed, open_deck=args.deck == "open")
    if args.deck == "closed":
        items = [trajectories.closed_view(t, args.player) for t in items]
    path = trajectories.save(args.out, items)
    if missing:
        print(f"created folder(s) {', '.join(str(m) for m in missing)}")
    steps = sum(len(t.steps) if isinstance(t, Trajectory) else len(t.events) for t in items)
    print(f"wrote {len(items)} {args.deck}-deck trajectories of {spec.name} ({steps} steps) to {path}")
    return 0


def _missing_folders(path: Path) -> list[Path]:
    """The folders above ``path`` that do not exist yet, outermost first."""
    return [p for p in reversed(path.absolute().parents) if not p.exists()]


def cmd_check(args: argparse.Namespace) -> int:
    spec = games.resolve(args.game)
    path = Path(args.model)
    oracle = args.model == "oracle" and not path.exists()
    if not oracle and (why := not_a_file(path, "model file")):
        raise UsageError(why)
    if not args.per_call_s > 0:
        raise UsageError(f"--per-call-s must be > 0, got {args.per_call_s}")
    trajs = trajectories.load(args.trajectories, game=spec.name)
    open_trajs = [t for t in trajs if isinstance(t, Trajectory)]
    if open_trajs and len(open_trajs) != len(trajs):
        raise TrajectoryFormatError(f"{args.trajectories}: mixes open- and closed-deck trajectories; check each "
                                    f"kind from its own file")
    if not open_trajs:
        if oracle:
            raise UsageError(f"{args.trajectories}: closed-deck trajectories are checked by replaying a model's "
                             f"inference function, and `oracle` has none; check the oracle on open-deck ones")
        return _closed_deck_check(path, [t for t in trajs if isinstance(t, ClosedTrajectory)], args)
    if oracle:  # the ground truth is trusted: it runs here, no sandbox needed
        return _print_report(checks.run_checks(oracle_model(spec), open_trajs), args)
    source = read_source(path)
    if args.no_sandbox:
        # the checks call the model's functions directly: no codec (ids) needed
        report = checks.run_checks(load_source(source, name=path.stem), open_trajs)
    else:
        report = _sandboxed_check(source, path.stem, open_trajs, per_call_s=args.per_call_s)
    return _print_report(report, args)


# What `cwm check` adds on open-deck data to what one player's view allows (printed after a closed-deck check).
OPEN_DECK_ADDS = ("open-deck trajectories would add the world-model checks at every recorded step: current "
                  "player, legal actions, chance outcomes, every player's observation, transition and rewards "
                  "(transition accuracy), and inference checks from every player's seat, not one")


def _closed_deck_check(path: Path, closed: list[ClosedTrajectory], args: argparse.Namespace) -> int:
    """The joint checks of one player's view: the model's inference function must give histories that replay,
    in the model itself, to that player's observations, actions and return (at every move and at the end), and
    random games in the model must end (``cwm.sandbox.checkers.inference_checker`` without a world model)."""
    source = read_source(path)
    _gate(source, path.stem)
    if args.no_sandbox:
        report = inference_checker(closed, world_model=None)(source)
    else:
        with Sandbox(limits=dataclasses.replace(Limits(), per_call_s=args.per_call_s)) as box:
            report = inference_checker(closed, world_model=None, sandbox=box)(source)
    _raise_load_error(report, path.stem)
    # counted as a closed-deck synthesis counts its accuracy (inference checks and random games), so the two agree
    code = _print_report(report, args, quantity="inference accuracy (joint)")
    if not args.json:
        print()
        print(f"checked one player's view ({len(closed)} closed-deck trajectories): inference replays and "
              f"random play only; {OPEN_DECK_ADDS}")
    return code


def _print_report(report: CheckReport, args: argparse.Namespace, *,
                  quantity: str = "transition accuracy (world model)") -> int:
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.summary(quantity=quantity))
        bound = perfect_score_note(report.transitions_passed, report.transitions_total)
        if bound:
            print(f"  {quantity} 1.000{bound}")
        for failures in report.failed_by_type().values():
            for f in failures[: args.max_failures]:
                print()
                print(f.render())
    return 0 if report.all_passed else 1


def read_source(path: Path) -> str:
    """A model file's text; a file that is not UTF-8 is a one-line ``ModelLoadError`` naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ModelLoadError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from e


def _sandboxed_check(source: str, name: str, trajs: list[Trajectory], *, per_call_s: float) -> CheckReport:
    """Runs the checks in a sandbox child, so a model that loops or eats memory is stopped and reported.

    The static gate and compilation run here first, so that forbidden code and syntax errors are the same
    one-line ``ModelLoadError`` as without the sandbox; so is an exception while the module body runs.
    """
    _gate(source, name)
    with Sandbox(limits=dataclasses.replace(Limits(), per_call_s=per_call_s)) as box:
        report = box.check_world_model(source, trajs)
    _raise_load_error(report, name)
    return report


def _gate(source: str, name: str) -> None:
    """The static gate and compilation, here: forbidden code and syntax errors are one-line ``ModelLoadError``s."""
    try:
        static_gate(source)
        compile(source, f"<{name}>", "exec")
    except ModelLoadError as e:
        raise ModelLoadError(f"{name}: {e}") from e
    except SyntaxError as e:
        raise ModelLoadError(f"{name}: syntax error at line {e.lineno}: {e.msg}") from e


def _raise_load_error(report: CheckReport, name: str) -> None:
    """A report of a module that did not load (a missing function, an error in its body) as a one-line error."""
    if report.error.startswith(("load:", "static:")):
        why = report.error.split(":", 1)[1].strip()
        raise ModelLoadError(f"{name}: {why.removeprefix('cwm_model: ')}")  # the child's own module name
    if report.executed == 0 and "missing contract function" in report.error:
        raise ModelLoadError(f"{name}: {report.error.removeprefix('cwm_model: ')}")
