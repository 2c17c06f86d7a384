"""Plays the ungated sleepers (tests/data/sleepers/ungated) in planning workers whose static gate is off, one
match each against a random agent, and prints one JSON line per match; then a control match of the
reference model in the same sandbox. Run by tests/security/test_ungated.py as its own process, so that the
sentinel secrets are in this process's environment from its start (/proc/PID/environ shows them), as they
would be in a user's shell.

    python tests/security/ungated_match.py --isolation process|bwrap --move-limit 0.2 NAME...
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import programs  # noqa: E402  (this folder, put on the path above)

from cwm import games  # noqa: E402
from cwm.agents.base import RandomAgent  # noqa: E402
from cwm.agents.worker import WorkerAgent  # noqa: E402
from cwm.arena import play_match  # noqa: E402
from cwm.sandbox import Sandbox  # noqa: E402
from cwm.sandbox.session import Session  # noqa: E402
from cwm.types import JSON  # noqa: E402
from planners.config import SearchConfig  # noqa: E402

SEARCH = SearchConfig(num_simulations=50, rollouts=1)


class UngatedSandbox(Sandbox):
    """A sandbox whose planning workers skip the static gate (a test of the layers behind it; production code
    has no way to ask for this)."""

    def open_session(self, job: str, source: str, payload: JSON, *, move_cpu_s: float, limits: Any = None,
                     gate: bool = True) -> Session:
        return super().open_session(job, source, payload, move_cpu_s=move_cpu_s, limits=limits, gate=False)


def play(name: str, source: str, box: Sandbox, limit: float) -> dict[str, JSON]:
    """One match: the sleeper moves first (its second move is the game's third), the random agent second."""
    agent = WorkerAgent({"model.py": source}, "tic_tac_toe", SEARCH, name=name, seed=0, move_cpu_s=limit,
                        sandbox=box)
    start = time.monotonic()
    try:
        outcome = play_match(games.load_game("tic_tac_toe"), [agent, RandomAgent(seed=1)], seed=0,
                             move_time_limit=limit)
    finally:
        agent.close()
    return {"name": name, "forfeit_seat": outcome.forfeit_seat, "kind": outcome.forfeit_kind,
            "reason": outcome.reason, "moves": outcome.moves, "seconds": time.monotonic() - start}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--isolation", choices=["process", "bwrap"], required=True)
    parser.add_argument("--move-limit", type=float, required=True)
    parser.add_argument("names", nargs="+")
    args = parser.parse_args(argv)
    with UngatedSandbox(isolation=args.isolation) as box:
        for name in args.names:
            program = programs.read(programs.UNGATED / f"{name}.py")
            print(json.dumps(play(name, program.source, box, args.move_limit)), flush=True)
        control = play("control", programs.REFERENCE, box, args.move_limit)
        print(json.dumps(dict(control, mode=box.mode, restarts=box.restarts)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
