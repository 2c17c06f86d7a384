"""The novel-game suite: generated games, synthesized from their rulebooks, against the well-known games.

Each folder under ``--games`` (default ``experiments/novel/games``) holds one game written by ``cwm games
generate FAMILY --seed S``; the suite first checks that the folder is byte for byte what this cwm's generator
writes for that family and seed, so the rules a session answered are the rules of this engine. Each game's
real session (recorded by ``experiments/real_session.py GAME --ship-to experiments/novel/sessions``, kept as
``<name>.<strategy>.jsonl`` beside its provenance) is then replayed through the main job (``cwm run``:
world-model synthesis, inference synthesis for a hidden-information game, held-out checks, the bundle, and
the arena against random play and the ground-truth planner). The same job runs on ``--known`` registered
games with their shipped rulebook-tier sessions, so both groups are measured the same way.

The table gives per game its family, how many rules its parameters switched on and its rulebook's length
(the rule complexity), the LLM calls and train / held-out accuracy of each synthesis, and the CWM agent's
paired comparison against each opponent; then per group (each family, all generated games, the known games)
the share solved and the mean calls and accuracy. Writes ``table.md``, ``table.json`` and ``record.json``;
each game's run folder (``OUT/runs/<name>``) resumes.

    python experiments/novel_suite.py                            # the shipped games and sessions, offline
    python experiments/novel_suite.py --num-test 20 --matches 5 --known tic_tac_toe --out runs/novel
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwm import games, pipeline
from cwm.files import InputLimitError, loads_bounded
from cwm.games.generated import FAMILIES, make
from cwm.pipeline import recording_provenance
from cwm.pipeline.recordings import recording_for

if __package__ in (None, ""):  # run as a file: make the repository root importable for `experiments`
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from experiments import common

EXPERIMENT = "novel_suite"
HERE = Path(__file__).resolve().parent / "novel"
FACTS_BYTES = 64 * 1024  # a generated game's facts.json is about 1 KB


@dataclasses.dataclass(frozen=True)
class SuiteConfig:
    """Everything that decides the table.

    Attributes:
      games: the folder of generated-game folders.
      sessions: the folder of ``<name>.<strategy>.jsonl`` sessions and their provenance.
      strategy: which session of each game is replayed.
      known: registered games run the same way from their shipped rulebook-tier sessions.
      num_test: held-out games of each synthesis.
      matches: arena games per opponent and seat order; sims and rollouts: the CWM agent's search.
      out: the run directory.
    """

    games: str
    sessions: str
    strategy: str
    known: tuple[str, ...]
    num_test: int
    matches: int
    sims: int
    rollouts: int
    out: str


@dataclasses.dataclass(frozen=True)
class SuiteGame:
    """One game of the table: how the main job names it, its group, its session and its complexity."""

    spec: str
    name: str
    group: str  # a family, or "known"
    session: Path
    rules_on: tuple[str, ...]
    rules_words: int
    rules: str | None  # the main job's --rules


def generated_game(folder: Path, config: SuiteConfig) -> SuiteGame:
    """A generated game's folder, checked against the generator.

    Raises:
      ExperimentError: facts.json does not read or names no family and seed, or a file differs from what
        this cwm's generator writes for them (one line naming the folder and the file).
    """
    facts = _facts(folder / "facts.json")
    family, seed = facts.get("family"), facts.get("seed")
    if family not in FAMILIES or type(seed) is not int or seed < 0:
        raise common.ExperimentError(f"{folder}/facts.json: family must be one of {', '.join(FAMILIES)} and seed a "
                                     f"whole number >= 0, got {family!r} and {seed!r}")
    made = make(family, seed)
    present = sorted(p.name for p in folder.iterdir() if p.is_file())
    if present != sorted(made.files):
        raise common.ExperimentError(f"{folder}: holds {', '.join(present)}, while the generator writes "
                                     f"{', '.join(sorted(made.files))} for {family} seed {seed}")
    for file, text in made.files.items():
        if (folder / file).read_bytes() != text.encode("utf-8"):
            raise common.ExperimentError(f"{folder}/{file}: differs from what this cwm's generator writes for "
                                         f"{family} seed {seed}; generate the game again")
    rulebook = made.files[f"{made.name}.md"]
    return SuiteGame(spec=f"{folder / made.name}.py:{made.name}", name=made.name, group=family,
                     session=Path(config.sessions) / f"{made.name}.{config.strategy}.jsonl",
                     rules_on=tuple(json.loads(made.files["facts.json"])["rules_on"]),
                     rules_words=len(rulebook.split()), rules=None)


def known_game(name: str) -> SuiteGame:
    """A registered game with its shipped rulebook-tier session (its rules_on: none counted)."""
    session = recording_for(name, rules="prose")
    if session is None:
        raise common.ExperimentError(f"--known {name}: no rulebook-tier session ships for it")
    spec = games.resolve(name, rules="prose")
    return SuiteGame(spec=name, name=name, group="known", session=session, rules_on=(),
                     rules_words=len(games.rules_text(spec).split()), rules="prose")


def _facts(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            data = f.read(FACTS_BYTES + 1)
        if len(data) > FACTS_BYTES:
            raise common.ExperimentError(f"{path}: larger than {FACTS_BYTES} bytes; not a generated game's facts")
        facts = loads_bounded(data, where=str(path))  # nesting bounded: a deep [[[[... is a one-line error
    except (OSError, ValueError, RecursionError, InputLimitError) as e:
        raise common.ExperimentError(f"{path}: not a readable JSON facts file ({type(e).__name__})") from None
    if not isinstance(facts, dict):
        raise common.ExperimentError(f"{path}: must hold a JSON object")
    return facts


def run_game(game: SuiteGame, config: SuiteConfig, out: Path, progress: bool) -> dict[str, Any]:
    """One row: the game's session replayed through the main job, or a row saying why it could not be."""
    base = {"game": game.name, "group": game.group, "rules_on": len(game.rules_on), "rules_words": game.rules_words}
    if not game.session.is_file():
        return base | {"status": f"no session at {game.session}"}
    provenance = recording_provenance(game.session) or {}  # read bounded, its short fields checked
    budget = provenance.get("budget", 8)
    if type(budget) is not int or budget < 1:
        raise common.ExperimentError(f"{game.session}: provenance budget must be a whole number >= 1, got {budget!r}")
    run = pipeline.RunConfig(game=game.spec, llm=f"replay:{game.session}", strategy=config.strategy, budget=budget,
                             num_test=config.num_test, matches=config.matches, simulations=config.sims,
                             rollouts=config.rollouts, rules=game.rules)
    report = pipeline.run(run, out / "runs" / game.name, progress=progress, yes=True)
    return base | {"status": "", "answered_by": provenance.get("answered_by"), "date": provenance.get("date"),
                   "world_model": _stage(report["synthesis"]), "inference": _stage(report.get("inference")),
                   "arena": [_comparison(c) for c in report.get("arena_comparisons") or ()]}


def _stage(stage: Any) -> dict[str, Any] | None:
    if not isinstance(stage, dict):
        return None
    return {k: stage.get(k) for k in ("solved", "llm_calls", "train_accuracy", "test_accuracy", "test_games")}


def _comparison(c: dict[str, Any]) -> dict[str, Any]:
    return {k: c.get(k) for k in ("opponent", "pairs", "mean", "lo", "hi", "verdict")}


def group_summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per group (each family, all generated games, the known games): games, solved, mean calls and accuracy."""
    played = [r for r in rows if not r["status"]]
    groups = list(dict.fromkeys(r["group"] for r in played if r["group"] != "known"))
    selections = [(g, [r for r in played if r["group"] == g]) for g in groups]
    selections.append(("all generated", [r for r in played if r["group"] != "known"]))
    selections.append(("known", [r for r in played if r["group"] == "known"]))
    out = []
    for label, chosen in selections:
        if not chosen:
            continue
        stages = [s for r in chosen for s in (r["world_model"], r["inference"]) if s is not None]
        tests = [s["test_accuracy"] for s in stages if s["test_accuracy"] is not None]
        out.append({"group": label, "games": len(chosen), "syntheses": len(stages),
                    "solved": sum(bool(s["solved"]) for s in stages),
                    "mean_calls": statistics.fmean(s["llm_calls"] for s in stages),
                    "mean_test_accuracy": statistics.fmean(tests) if tests else None,
                    "mean_rules_on": None if label == "known" else statistics.fmean(r["rules_on"] for r in chosen),
                    "mean_rules_words": statistics.fmean(r["rules_words"] for r in chosen)})
    return out


def markdown(rows: Sequence[dict[str, Any]], config: SuiteConfig) -> str:
    """The per-game table (sorted by group, then rules switched on), the group summary and the provenance."""
    lines = [f"# Novel-game suite ({config.strategy} sessions, {config.num_test} held-out games, "
             f"{config.matches} arena games per opponent and seat order, {config.sims} x {config.rollouts} search)",
             "", "| game | group | rules on | rulebook words | world model: calls, train / held-out | "
             "inference: calls, train / held-out | CWM agent vs opponents (paired) |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["group"] == "known", r["group"], r["rules_on"], r["game"])):
        head = f"| {r['game']} | {r['group']} | {r['rules_on'] if r['group'] != 'known' else '—'} | {r['rules_words']} |"
        if r["status"]:
            lines.append(f"{head} {r['status']} | — | — |")
            continue
        arena = "; ".join(_comparison_text(c) for c in r["arena"]) or "—"
        lines.append(f"{head} {_stage_text(r['world_model'])} | {_stage_text(r['inference'])} | {arena} |")
    lines += ["", "| group | games | syntheses solved | mean LLM calls | mean held-out acc. | mean rules on "
              "| mean rulebook words |", "|---|---|---|---|---|---|---|"]
    for s in group_summary(rows):
        test = "—" if s["mean_test_accuracy"] is None else f"{s['mean_test_accuracy']:.4f}"
        lines.append(f"| {s['group']} | {s['games']} | {s['solved']} of {s['syntheses']} | {s['mean_calls']:.2f} | "
                     f"{test} | {'—' if s['mean_rules_on'] is None else format(s['mean_rules_on'], '.1f')} | "
                     f"{s['mean_rules_words']:.0f} |")
    answered = sorted({f"{r['answered_by']} ({r['date']})" for r in rows if not r["status"]})
    lines += ["", "Sessions answered by: " + ("; ".join(answered) or "none replayed") + ".", "",
              "Rules on: the rules the game's parameters switched on (`rules_on` in its facts.json); the known "
              "games have none counted. Calls: LLM calls of the synthesis (it stops when every training check "
              "passes). Accuracy: the fraction of transitions on which every check passes. The arena column is "
              "the arena's paired comparison of the CWM agent with each opponent, both seats on one deal."]
    return "\n".join(lines) + "\n"


def _comparison_text(c: dict[str, Any]) -> str:
    """``gt-mcts: +0.20 [-0.10, +0.50], 10 pairs, no difference detected`` (the verdict's first clause)."""
    if c["mean"] is None:
        return f"{c['opponent']}: {c['verdict']}"
    return (f"{c['opponent']}: {c['mean']:+.2f} [{c['lo']:+.2f}, {c['hi']:+.2f}], {c['pairs']} pairs, "
            f"{str(c['verdict']).split(';')[0]}")


def _stage_text(stage: dict[str, Any] | None) -> str:
    if stage is None:
        return "—"
    solved = f"{stage['llm_calls']}" if stage["solved"] else f"not solved in {stage['llm_calls']}"
    test = "—" if stage["test_accuracy"] is None else f"{stage['test_accuracy']:.4f}"
    return f"{solved}, {stage['train_accuracy']:.4f} / {test}"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", default=str(HERE / "games"), help="folder of generated-game folders "
                                                                "(default experiments/novel/games)")
    p.add_argument("--sessions", default=str(HERE / "sessions"),
                   help="folder of <name>.<strategy>.jsonl sessions (default experiments/novel/sessions)")
    p.add_argument("--strategy", choices=("tree", "conversation"), default="tree",
                   help="which session of each game to replay (default tree)")
    p.add_argument("--known", default="tic_tac_toe,connect_four,leduc_poker",
                   help="registered games run the same way, from their rulebook-tier sessions (comma-separated; "
                        "default tic_tac_toe,connect_four,leduc_poker; empty for none)")
    p.add_argument("--num-test", type=int, default=20, help="held-out games per synthesis (default 20)")
    p.add_argument("--matches", type=int, default=5, help="arena games per opponent and seat order (default 5)")
    p.add_argument("--sims", type=int, default=100, help="MCTS simulations per move (default 100)")
    p.add_argument("--rollouts", type=int, default=1, help="rollouts per leaf (default 1)")
    p.add_argument("--out", default=None, help="the run directory (default runs/novel_suite-<time>)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return common.script_main(parser(), _run, EXPERIMENT, argv)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    for flag, value in (("--num-test", args.num_test), ("--matches", args.matches), ("--sims", args.sims),
                        ("--rollouts", args.rollouts)):
        if value < 1:
            raise common.ExperimentError(f"{flag} must be at least 1, got {value}")
    started = _dt.datetime.now(_dt.timezone.utc)
    out = common.run_directory(args.out, EXPERIMENT)
    config = SuiteConfig(games=args.games, sessions=args.sessions, strategy=args.strategy,
                         known=tuple(k for k in args.known.split(",") if k), num_test=args.num_test,
                         matches=args.matches, sims=args.sims, rollouts=args.rollouts, out=str(out))
    folders = sorted(p for p in Path(config.games).iterdir() if p.is_dir()) if Path(config.games).is_dir() else []
    if not folders:
        raise common.ExperimentError(f"--games {config.games}: no game folders in it")
    suite = [generated_game(f, config) for f in folders] + [known_game(k) for k in config.known]
    common.begin(out, config)
    rows = []
    for game in suite:
        rows.append(run_game(game, config, out, progress=not args.quiet))
        common.write_json(out / "table.json", rows)  # kept as it grows: a crash loses no finished game
    text = markdown(rows, config)
    (out / "table.md").write_text(text, encoding="utf-8")
    common.write_record(out, experiment=EXPERIMENT, config=config, argv=argv,
                        llm={"replayed": [str(g.session) for g in suite]}, prompt_hashes={},
                        seeds={"run": [0]}, results=rows, started=started)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
