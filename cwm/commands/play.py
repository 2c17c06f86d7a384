"""`cwm play`: a person plays any agent in the terminal; the match is saved like an arena match."""

from __future__ import annotations

import argparse
from pathlib import Path

from cwm import games
from cwm.agents.human import RESIGNED
from cwm.agents.specs import Settings
from cwm.arena import human as arena_human
from cwm.arena import identity
from cwm.arena import replay as arena_replay
from cwm.text import clean
from planners.config import SearchConfig


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play a game against an agent in the terminal",
                       description="Plays one game between you and an agent (random, gt-mcts, gt-ismcts, "
                                   "cwm:MODEL.py|BUNDLE_DIR, cwm-selected:DIR, llm:CLIENT, llm+legal:CLIENT). "
                                   "Type a move in the game's notation or its number (the game's action id, the "
                                   "same all game); ? lists the legal moves, quit resigns. The match is saved in an arena folder (cwm replay, cwm view).")
    p.add_argument("game", help="registry name, OpenSpiel game string, or path/to/module.py:short_name")
    p.add_argument("--against", required=True, help="the agent's spec ([NAME=]SPEC)")
    p.add_argument("--seat", type=int, choices=(0, 1), default=0, help="your seat (0 moves first; default 0)")
    p.add_argument("--sims", type=int, default=1000, help="the agent's MCTS/ISMCTS simulations per move (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seeds chance and the agent, with the match key (default 0)")
    p.add_argument("--out", default=None, help="the arena folder to save in (default runs/play/GAME)")
    p.set_defaults(func=cmd_play)


def cmd_play(args: argparse.Namespace) -> int:
    settings = Settings(search=SearchConfig(num_simulations=args.sims))
    out = Path(args.out) if args.out else Path("runs") / "play" / games.resolve(args.game).name
    result = arena_human.play(args.game, args.against, seat=args.seat, out_dir=out, settings=settings,
                              seed=args.seed)
    transcript = arena_replay.load(out, result)
    steps = transcript["steps"]
    print(clean(str(steps[-1]["state"] if steps else transcript["initial"]), limit=None, multiline=True))
    mine, other = result.returns[args.seat], result.returns[1 - args.seat]
    verdict = "you won" if mine > other else ("you lost" if mine < other else "a draw")
    forfeit = f" ({result.reason})" if result.forfeit_seat is not None else ""
    if result.forfeit_kind == RESIGNED:
        forfeit = " (you resigned)" if result.forfeit_seat == args.seat else " (the agent resigned)"
    print(f"game over: {verdict}{forfeit}; returns {' '.join(f'{x:+g}' for x in result.returns)}")
    print(f"saved as {identity.display_name(result)} in {out} (cwm replay '{out}/{result.key}', cwm view {out})")
    return 0
