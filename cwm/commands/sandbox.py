"""`cwm sandbox`: what isolation this machine offers, the static gate on files, and sandboxed checks."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cwm import games
from cwm.games import trajectories
from cwm.sandbox import Limits, Sandbox, bwrap_available, static_gate
from cwm.sandbox.layers import layers_available
from cwm.stats import perfect_score_note
from cwm.types import ModelLoadError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sandbox", help="the sandbox for LLM-written code: info, gate, check")
    inner = p.add_subparsers(dest="sandbox_command", metavar="SANDBOX_COMMAND", required=True)

    q = inner.add_parser("info", help="which isolation layers are available here")
    q.set_defaults(func=cmd_info)

    q = inner.add_parser("gate", help="run the static gate on source files; exit 1 if any is rejected")
    q.add_argument("files", nargs="+", help="Python source files")
    q.set_defaults(func=cmd_gate)

    q = inner.add_parser("check", help="check a model file in the sandbox and print the report")
    q.add_argument("model", help="model source file (a .py module with the CWM functions)")
    q.add_argument("--game", required=True, help="the game, to record trajectories of (unless --trajectories)")
    q.add_argument("--trajectories", help="open-deck JSONL trajectories (default: record --n games)")
    q.add_argument("--n", type=int, default=5, help="games to record when no file is given (default 5)")
    q.add_argument("--seed", type=int, default=0, help="seed of recorded game i is SEED+i (default 0)")
    q.add_argument("--isolation", choices=["auto", "bwrap", "process"], default="auto")
    q.add_argument("--wall-s", type=float, default=Limits.wall_s, help="CPU seconds the job may use, also the floor of its wall-clock backstop (default 60)")
    q.add_argument("--per-call-s", type=float, default=Limits.per_call_s, help="per-call budget (default 2)")
    q.add_argument("--memory-mb", type=int, default=Limits.memory_mb, help="memory limit (default 2048)")
    q.add_argument("--json", action="store_true", help="print the report as JSON")
    q.set_defaults(func=cmd_check)


def cmd_info(args: argparse.Namespace) -> int:

    facts = {"bwrap": bwrap_available(), **layers_available()}
    for name, ok in facts.items():
        print(f"{name:12} {'yes' if ok else 'NO'}")
    if not facts["bwrap"]:
        print("without bubblewrap, sandboxed code can read any file this user can (see docs/security.md)")
    return 0


def cmd_gate(args: argparse.Namespace) -> int:
    rejected = 0
    for name in args.files:
        try:
            static_gate(Path(name).read_text(encoding="utf-8"))
            print(f"{name}: ok")
        except ModelLoadError as e:
            rejected += 1
            print(f"{name}: rejected: {e}")
    return 1 if rejected else 0


def cmd_check(args: argparse.Namespace) -> int:
    source = Path(args.model).read_text(encoding="utf-8")
    if args.trajectories:
        trajs = trajectories.load_open(args.trajectories, game=args.game)
    else:
        trajs = trajectories.collect(games.resolve(args.game), args.n, seed=args.seed)
    limits = Limits(wall_s=args.wall_s, cpu_s=args.wall_s, memory_mb=args.memory_mb, per_call_s=args.per_call_s)
    with Sandbox(limits=limits, isolation=args.isolation) as sb:
        report = sb.check_world_model(source, trajs)
        mode = sb.mode
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(f"[sandbox: {mode}] {report.summary(quantity='transition accuracy (world model)')}")
        bound = perfect_score_note(report.transitions_passed, report.transitions_total)
        if bound:
            print(f"  transition accuracy (world model) 1.000{bound}")
        for failure in report.failures[:5]:
            print(failure.render())
    return 0 if report.all_passed else 1
