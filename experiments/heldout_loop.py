"""The synthesis loop measured on a held-out rulebook game: tree search against conversation, replayed offline.

Each strategy's real session of the held-out game (recorded by ``experiments/real_session.py --strategy S
--ship-to experiments/heldout/sessions``, kept as ``<game>.<strategy>.jsonl`` beside its
``.provenance.json``) is replayed into a world-model synthesis with the session's strategy, budget and seed,
and its best program is checked on ``--num-test`` fresh held-out games (half random, half MCTS play, the
games ``cwm.synthesis.test_set`` draws). The table gives, per strategy, the LLM calls until the solving
program appeared (or "not solved in N"), the train and held-out transition accuracy (a perfect held-out
score with its per-game bound, ``cwm.stats.perfect_score_note``) and the held-out failures by rule branch;
a strategy without a session is a row saying so. Writes ``table.md``, ``table.json`` and ``record.json``.

    python experiments/heldout_loop.py                       # Cairn, the shipped sessions, 100 held-out games
    python experiments/heldout_loop.py --num-test 10 --out runs/heldout-loop
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwm import games
from cwm.llm import make_client
from cwm.pipeline import recording_provenance
from cwm.stats import perfect_score_note
from cwm.synthesis import STRATEGIES, SynthesisSettings, synthesize_world_model

if __package__ in (None, ""):  # run as a file: make the repository root importable for `experiments`
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from experiments import common, synthesis_table

EXPERIMENT = "heldout_loop"
HERE = Path(__file__).resolve().parent / "heldout"
DEFAULT_GAME = f"{HERE / 'cairn.py'}:cairn"
DEFAULT_STRATEGY = SynthesisSettings().strategy


@dataclasses.dataclass(frozen=True)
class HeldoutLoopConfig:
    """Everything that decides the table.

    Attributes:
      game: the held-out game, ``path/to/module.py:short_name`` (its rules: the ``.md`` beside it).
      sessions: the folder of ``<short_name>.<strategy>.jsonl`` sessions and their provenance.
      num_test: fresh held-out games the best program of each session is checked on.
      out: the run directory.
    """

    game: str
    sessions: str
    num_test: int
    out: str


def session_paths(config: HeldoutLoopConfig, strategy: str) -> tuple[Path, Path]:
    """The recording and provenance of ``strategy``'s session."""
    name = config.game.rsplit(":", 1)[-1]
    folder = Path(config.sessions)
    return folder / f"{name}.{strategy}.jsonl", folder / f"{name}.{strategy}.provenance.json"


def replay_row(config: HeldoutLoopConfig, spec: games.GameSpec, strategy: str, out: Path) -> dict[str, Any]:
    """One strategy's row: its session replayed and measured, or a row saying why it could not be."""
    recording, provenance_path = session_paths(config, strategy)
    if not recording.is_file():
        return {"strategy": strategy, "status": f"no session at {recording}"}
    provenance = recording_provenance(recording) or {}  # read bounded, its short fields checked
    if provenance.get("strategy", strategy) != strategy:
        raise common.ExperimentError(f"{provenance_path}: strategy is {provenance.get('strategy')!r}, the file name "
                                     f"says {strategy!r}")
    rules = games.rules_label(spec, games.rules_text(spec))
    if provenance.get("rules", rules) != rules:
        raise common.ExperimentError(f"{provenance_path}: the session's rules are {provenance.get('rules')!r}, "
                                     f"the game's rules file is {rules!r}: the replies answer other prompts")
    stages = provenance.get("stages")
    stage = stages.get("world model") if isinstance(stages, dict) else None
    calls = stage.get("llm_calls") if isinstance(stage, dict) else None  # sessions recorded before "budget" was
    budget = _count(provenance.get("budget", calls), provenance_path, "budget")
    seed = _count(provenance.get("seed", 0), provenance_path, "seed")
    settings = SynthesisSettings.of("world_model", strategy=strategy, budget=budget, seed=seed,
                                    num_test=config.num_test)
    result = synthesize_world_model(spec, make_client(f"replay:{recording}"), settings,
                                    run_dir=out / "synthesis" / strategy)
    return {
        "strategy": strategy, "status": "", "solved": result.solved, "llm_calls": result.llm_calls,
        "calls_to_solve": synthesis_table.calls_to_best(result) if result.solved else None, "budget": budget,
        "seed": seed, "train_accuracy": result.train_accuracy, "test_accuracy": result.test_accuracy,
        "test_checked": result.test_checked, "test_games": result.test_games,
        "test_failures_by_branch": result.test_failures_by_branch, "rules": result.rules,
        "answered_by": provenance.get("answered_by"), "relay": provenance.get("relay"), "date": provenance.get("date"),
        "prompt_hashes": result.prompt_hashes,
    }


def _count(value: Any, path: Path, field: str) -> int:
    if type(value) is not int or value < 0 or (field == "budget" and value < 1):
        raise common.ExperimentError(f"{path}: {field} must be a whole number{' >= 1' if field == 'budget' else ''}, "
                                     f"got {value!r}")
    return value


def markdown(rows: Sequence[dict[str, Any]], config: HeldoutLoopConfig) -> str:
    """The table, the replies' provenance and whether the default strategy needed no more calls."""
    name = config.game.rsplit(":", 1)[-1]
    lines = [f"# The synthesis loop on the held-out rulebook game {name}", "",
             f"| strategy | LLM calls to solve | train acc. | held-out acc. ({config.num_test} games) "
             "| held-out failures by rule branch |", "|---|---|---|---|---|"]
    for r in rows:
        if r["status"]:
            lines.append(f"| {r['strategy']} | {r['status']} | — | — | — |")
            continue
        solve = str(r["calls_to_solve"]) if r["solved"] else f"not solved in {r['llm_calls']}"
        test = "—" if r["test_accuracy"] is None else f"{r['test_accuracy']:.4f}"
        if r["test_accuracy"] == 1.0:  # what a perfect score bounds, per check and per game
            test += perfect_score_note(int(r["test_checked"] or 0), int(r["test_checked"] or 0), games=r["test_games"])
        branches = "; ".join(f"{b}: {n}" for b, n in r["test_failures_by_branch"].items()) or "none"
        lines.append(f"| {r['strategy']} | {solve} | {r['train_accuracy']:.4f} | {test} | {branches} |")
    replayed = [r for r in rows if not r["status"]]
    lines += ["", "Replies:" if replayed else "No session was replayed.", *(f"- {r['strategy']}: answered by {r['answered_by']}, {r['date']}, relay {r['relay']}; "
                                f"budget {r['budget']}, seed {r['seed']}, rules {r['rules']}"
                                for r in replayed)]
    lines += ["", verdict(rows), "",
              "LLM calls to solve: calls made until the program passing every training check appeared. Accuracy: "
              "fraction of recorded transitions on which every check passes, for the best program; held-out: "
              "fresh games, half random and half MCTS play. Failures by rule branch: the held-out failures kept "
              "(at most 20 per test type), by test type and the kind of the last action."]
    return "\n".join(lines) + "\n"


def verdict(rows: Sequence[dict[str, Any]]) -> str:
    """Whether the default strategy needed no more LLM calls to solve than conversation (or why it is not known)."""
    by = {r["strategy"]: r for r in rows}
    default, other = by.get(DEFAULT_STRATEGY), by.get("conversation")
    if not default or not other or default["status"] or other["status"]:
        return f"Default strategy ({DEFAULT_STRATEGY}) against conversation: not known (a session is missing)."
    if not default["solved"]:
        said = "neither solved" if not other["solved"] else "no: only conversation solved it"
        return f"Default strategy ({DEFAULT_STRATEGY}) needs no more calls than conversation: {said}."
    if not other["solved"]:
        return f"Default strategy ({DEFAULT_STRATEGY}) needs no more calls than conversation: yes (only it solved it)."
    said = "yes" if default["calls_to_solve"] <= other["calls_to_solve"] else "no"
    return (f"Default strategy ({DEFAULT_STRATEGY}) needs no more calls than conversation: {said} "
            f"({default['calls_to_solve']} against {other['calls_to_solve']}).")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default=DEFAULT_GAME, help="the held-out game module, path/to/module.py:short_name "
                                                        "(default Cairn, experiments/heldout/cairn.py:cairn)")
    p.add_argument("--sessions", default=str(HERE / "sessions"),
                   help="folder of <short_name>.<strategy>.jsonl sessions (default experiments/heldout/sessions)")
    p.add_argument("--num-test", type=int, default=100, help="fresh held-out games per session (default 100)")
    p.add_argument("--out", default=None, help="the run directory (default runs/heldout_loop-<time>)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return common.script_main(parser(), _run, EXPERIMENT, argv)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.num_test < 1:
        raise common.ExperimentError(f"--num-test must be at least 1, got {args.num_test}")
    if ".py:" not in args.game:
        raise common.ExperimentError(f"--game must be a held-out game module, path/to/module.py:short_name, "
                                     f"not {args.game!r}")
    started = _dt.datetime.now(_dt.timezone.utc)
    out = common.run_directory(args.out, EXPERIMENT)
    config = HeldoutLoopConfig(game=args.game, sessions=args.sessions, num_test=args.num_test, out=str(out))
    spec = games.resolve(config.game)
    common.begin(out, config)
    rows = [replay_row(config, spec, strategy, out) for strategy in STRATEGIES]
    text = markdown(rows, config)
    (out / "table.md").write_text(text, encoding="utf-8")
    common.write_json(out / "table.json", rows)
    common.write_record(out, experiment=EXPERIMENT, config=config, argv=argv,
                        llm={"replayed": [str(session_paths(config, s)[0]) for s in STRATEGIES]},
                        prompt_hashes={r["strategy"]: r.get("prompt_hashes", {}) for r in rows},
                        seeds={r["strategy"]: [r["seed"]] for r in rows if not r["status"]}, results=rows,
                        started=started)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
