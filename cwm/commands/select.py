"""`cwm select`: sample rejection among several syntheses of one game, played inside the models themselves."""

from __future__ import annotations

import argparse

from cwm import arena, selection
from cwm.agents.specs import Settings
from cwm.sandbox.host import DEFAULT_HOST_CPU_S
from planners.config import SearchConfig

_ABOUT = ("Picks --hosts of the bundles as stand-in games; in each, every ordered pairing of the bundles' CWM "
          "agents (self-play included) plays --games games, all of them contained. A host failure or an illegal "
          "move makes both players lose. Agents more than --margin of the utility range below the best are "
          "rejected; the arena plays the survivors as cwm-selected:OUT. Re-running with the same --out resumes.")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("select", help="reject weak syntheses by games played inside the synthesized models",
                       description=_ABOUT)
    p.add_argument("game", help="registry name, OpenSpiel game string, or path/to/module.py:short_name")
    p.add_argument("bundles", nargs="+", metavar="BUNDLE", help="bundle directories (cwm export), at least two")
    p.add_argument("--out", required=True, help="the selection folder (games.jsonl, selection.json, selection.md)")
    p.add_argument("--hosts", type=int, default=2, help="bundles that host games (default 2, as the paper)")
    p.add_argument("--games", type=int, default=selection.DEFAULT_GAMES,
                   help=f"games per host and ordered pairing (default {selection.DEFAULT_GAMES}, as the paper)")
    p.add_argument("--margin", type=float, default=0.1,
                   help="reject agents more than this fraction of the utility range below the best (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="picks the hosts and seeds every game (default 0)")
    p.add_argument("--sims", type=int, default=1000, help="MCTS/ISMCTS simulations per move (default 1000)")
    p.add_argument("--rollouts", type=int, default=10, help="random rollouts per leaf (default 10)")
    p.add_argument("--uct-c", type=float, default=2.0, help="UCT exploration constant (default 2.0)")
    p.add_argument("--move-time-limit", type=float, default=arena.DEFAULT_MOVE_TIME_S,
                   help=f"CPU seconds per agent move (default {arena.DEFAULT_MOVE_TIME_S:g})")
    p.add_argument("--host-time-limit", type=float, default=DEFAULT_HOST_CPU_S,
                   help=f"CPU seconds per request to a host model (default {DEFAULT_HOST_CPU_S:g})")
    p.add_argument("--executor", default="local", help="local (process pool, default), local:N, inline, ray or "
                                                       "ray:ADDRESS")
    p.add_argument("--no-progress", action="store_true", help="hide the size line and the progress bar")
    p.set_defaults(func=cmd_select)


def cmd_select(args: argparse.Namespace) -> int:
    settings = Settings(search=SearchConfig(num_simulations=args.sims, rollouts=args.rollouts, uct_c=args.uct_c))
    chosen = selection.SelectionSettings(hosts=args.hosts, games_per_pairing=args.games, agents=settings,
                                         seed=args.seed, margin=args.margin, executor=args.executor,
                                         move_time_limit=args.move_time_limit, host_cpu_s=args.host_time_limit,
                                         progress=not args.no_progress)
    result = selection.select_models(args.game, args.bundles, args.out, chosen)
    print((result.out / "selection.md").read_text(encoding="utf-8"), end="")
    print(f"survivors: {', '.join(result.survivors) or 'none'}; play them in the arena as {result.spec}")
    return 0
