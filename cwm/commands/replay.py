"""`cwm replay` (a match move by move in the terminal) and `cwm view` (a tournament as one HTML page)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cwm.arena import replay as arena_replay
from cwm.arena import view as arena_view


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="print a finished arena match move by move",
                       description="Prints a match of a tournament folder (cwm arena --out DIR, cwm play) move "
                                   "by move: the game's rendering of each state, each seat's observation in a "
                                   "game with hidden information, and the LLM's answers. DIR alone lists the "
                                   "matches; DIR/MATCH names one by key (quote it: 'random|gt-mcts#0'), "
                                   "transcript file name, or number in that list.")
    p.add_argument("match", help="DIR (list the matches) or DIR/MATCH")
    _game_option(p)
    p.set_defaults(func=cmd_replay)
    v = sub.add_parser("view", help="write a tournament's HTML page (leaderboard, results, step-through matches)",
                       description="Writes one self-contained HTML page for a tournament folder: the "
                                   "leaderboard, the results table, and each match as a step-through view "
                                   "with the LLM's reasoning beside each move (no network needed to open it).")
    v.add_argument("dir", help="a tournament folder (cwm arena --out DIR)")
    v.add_argument("--out", default=None, help="the page to write (default DIR/view.html)")
    _game_option(v)
    v.set_defaults(func=cmd_view)


def _game_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default=None,
                   help="the folder's game, to rebuild a match that has no transcript: a registry name, an "
                        "OpenSpiel game string, or your own path/to/module.py:short_name (a folder is data: cwm "
                        "never imports a module its config.json names; default the recorded game when it is "
                        "a registered or OpenSpiel game)")


def cmd_replay(args: argparse.Namespace) -> int:
    path = Path(args.match)
    if (path / "matches.jsonl").is_file():
        print(arena_replay.listing(path), end="")
        return 0
    out_dir, name = _split(args.match)
    result = arena_replay.find(out_dir, name)
    print(arena_replay.render(arena_replay.load(out_dir, result, args.game)), end="")
    return 0


def _split(text: str) -> tuple[Path, str]:
    """``DIR/MATCH`` as the folder and the match name; a key may hold a slash (``cwm:a/b|random#0``), so the
    folder is the longest prefix that is a tournament folder."""
    parts = text.split("/")
    for cut in range(len(parts) - 1, 0, -1):
        folder = Path("/".join(parts[:cut]) or "/")
        if (folder / "matches.jsonl").is_file():
            return folder, "/".join(parts[cut:])
    raise arena_replay.ReplayError(f"{text}: no tournament folder (one holding matches.jsonl) in this path")


def cmd_view(args: argparse.Namespace) -> int:
    written = arena_view.write(Path(args.dir), Path(args.out) if args.out else None, args.game)
    print(f"wrote {written}")
    return 0
