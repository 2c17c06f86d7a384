"""`cwm serve`: a local web app over a results folder or a bundle: leaderboard, replays with drawn boards, live
progress of a running tournament, and games against any agent in the browser (``cwm.arena.serve``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cwm.arena import serve as arena_serve


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="a local web app: results, drawn replays, and play against an agent",
                       description="Serves a results folder (cwm arena, cwm play) or a bundle at "
                                   "http://127.0.0.1:PORT/: the leaderboard and results, each match replayed "
                                   "step by step with its board drawn and the LLM's reply beside each move, a "
                                   "running tournament's matches as they finish, and a game against any agent "
                                   "in the browser, saved as a match like cwm play's. With --play and no PATH, "
                                   "serves the folder the games are saved in.")
    p.add_argument("path", nargs="?", default=None, help="a results folder or a bundle directory")
    p.add_argument("--play", metavar="GAME", default=None, help="the game the play form starts with")
    p.add_argument("--agent", default="random", help="the agent spec the play form starts with (default random; "
                   "cwm:BUNDLE when PATH is a bundle)")
    p.add_argument("--seat", type=int, choices=(0, 1), default=0, help="your seat in the play form (default 0)")
    p.add_argument("--sims", type=int, default=200, help="the agent's MCTS/ISMCTS simulations per move (default 200)")
    p.add_argument("--seed", type=int, default=0, help="seeds chance and the agent, with the match key (default 0)")
    p.add_argument("--out", default=None, help="where games played in the browser are saved (default runs/play/GAME, "
                   "as cwm play)")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="the port (default 8000; 0 picks a free one)")
    p.add_argument("--allow-remote", action="store_true",
                   help="listen on a non-loopback --host: anyone who reaches it can read the folder and start games")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    if args.path is None and args.play is None:
        raise arena_serve.ServeError("cwm serve needs a results folder or bundle (PATH), or --play GAME")
    settings = arena_serve.ServeSettings(
        path=Path(args.path) if args.path else None, host=args.host, port=args.port, allow_remote=args.allow_remote,
        game=args.play, agent=args.agent, seat=args.seat, sims=args.sims, seed=args.seed,
        play_out=Path(args.out) if args.out else None)
    server = arena_serve.make_server(settings)
    if args.allow_remote:
        print(f"WARNING: listening on {args.host}, not only this machine: anyone who reaches it can read the "
              f"folder and start games")
    print(f"cwm serve: {arena_serve.url_of(server)} (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
