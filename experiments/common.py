"""What the experiment scripts share: per-game configs, the common flags, the run directory and its record.

A run directory (``--out``, default ``runs/<experiment>-<UTC time>``) holds ``config.json`` (written
first; a directory holding another experiment's settings is refused, the same settings resume),
the stage outputs, the tables and ``record.json``: config, LLM model and settings, prompt hashes,
seeds, git commit, timing and results.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime as _dt
import json
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from cwm import games
from cwm.files import changed_settings
from cwm.synthesis.held_out import DEFAULT_TRANSITIONS
from cwm.synthesis.settings import DEFAULT_TRAIN_POOL
from cwm.types import CwmError

PERFECT_INFORMATION_GAMES = ("tic_tac_toe", "connect_four", "backgammon", "gen_tic_tac_toe", "gen_chess")
IMPERFECT_INFORMATION_GAMES = ("bargaining", "leduc_poker", "gin_rummy", "quadranto", "hand_of_war")
CONFIG_DIR = Path(__file__).resolve().parent / "configs"


class ExperimentError(CwmError, ValueError):
    """An experiment that cannot run as asked (bad config file or flag, another run in the directory)."""


@dataclasses.dataclass(frozen=True)
class GameConfig:
    """The paper-sized settings of one game (``experiments/configs/<game>.json``); flags override them.

    Attributes:
      game: registry name (or any game string ``cwm.games.resolve`` accepts).
      num_train: training games of random play given to the synthesis (paper: 5).
      train_pool: the training games are chosen from ``train_pool * num_train`` games of random play to show
        every kind of event they hold (``SynthesisSettings.train_pool``; 1: the first ``num_train`` games).
      budget: LLM-call budget of one synthesis run (paper: 500).
      strategy: refinement strategy, ``tree`` or ``conversation`` (paper: tree).
      test_transitions: the held-out test set's size in transitions, half from random and half from MCTS
        play (paper: 10,000), generated once and cached (``cwm.synthesis.held_out.held_out_set``).
      num_test: ``None`` (the default): the held-out set is sized by ``test_transitions``; ``N``: exactly
        ``N`` games instead (0: none); an inference synthesis's held-out games of random play (``None``: 100).
      test_mcts_simulations: simulations per move of the MCTS player of the test games (``None``: the
        library's default, fewer for a long game: ``cwm.synthesis.held_out.default_simulations``).
      seeds: synthesis runs per game (paper: 5).
      matches: arena games per pairing and seat order (paper: 100 over both seats, so 50).
      sims: (IS)MCTS simulations per move in the arena (paper: 1000).
      rollouts: random rollouts per MCTS leaf (paper: 10).
      paper: the paper's reported numbers for this game (for the comparison column), may be empty.
      rules: the rules in the synthesis prompts: ``spec`` (the specification tier), ``prose`` (the rulebook
        tier) or a rules file (``cwm.games.with_rules``).
    """

    game: str
    num_train: int = 5
    train_pool: int = DEFAULT_TRAIN_POOL
    budget: int = 500
    strategy: str = "tree"
    test_transitions: int = DEFAULT_TRANSITIONS
    num_test: int | None = None
    test_mcts_simulations: int | None = None
    seeds: int = 5
    matches: int = 50
    sims: int = 1000
    rollouts: int = 10
    paper: dict[str, float | None] = dataclasses.field(default_factory=dict)
    rules: str = "spec"

    def spec(self) -> games.GameSpec:
        """The game, reading the rules ``rules`` names."""
        return games.resolve(self.game, rules=self.rules)


def load_game_config(path: str | Path) -> GameConfig:
    """Reads one game config file.

    Raises:
      ExperimentError: the file is missing, not JSON, lacks ``game``, or holds an unknown key.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise ExperimentError(f"config {str(path)!r} does not exist") from e
    except json.JSONDecodeError as e:
        raise ExperimentError(f"config {path}: not valid JSON ({e.msg}, line {e.lineno})") from e
    known = {f.name for f in dataclasses.fields(GameConfig)}
    if not isinstance(data, dict) or "game" not in data:
        raise ExperimentError(f"config {path}: expected a JSON object with at least a 'game' key")
    unknown = sorted(set(data) - known)
    if unknown:
        raise ExperimentError(f"config {path}: unknown key(s) {unknown}; known keys are {sorted(known)}")
    return GameConfig(**data)


def default_game_config(game: str) -> GameConfig:
    """The shipped config of a registered game (``configs/<name>.json``), else the paper's defaults."""
    try:
        name = games.resolve(game).name
    except CwmError as e:
        raise ExperimentError(f"--games: {e}") from e
    path = CONFIG_DIR / f"{name}.json"
    return load_game_config(path) if path.is_file() else GameConfig(game=game)


def add_common_args(parser: argparse.ArgumentParser, *, default_executor: str) -> None:
    """The flags every experiment takes; a flag left out keeps the value of each game's config."""
    parser.add_argument("--games", default=None, help="comma-separated games (each starts from its config "
                        "in experiments/configs/ when one ships)")
    parser.add_argument("--config", action="append", default=[], metavar="FILE",
                        help="a game config JSON (experiments/configs/<game>.json); may be repeated")
    parser.add_argument("--llm", default="auto", help="LLM spec for synthesis: gemini[:MODEL] | openai:MODEL | "
                        "replay:FILE | batch:DIR | auto (Gemini when GEMINI_API_KEY is set, else the recorded session)")
    parser.add_argument("--cache", default=None, help="SQLite LLM cache shared by runs (default: none)")
    parser.add_argument("--seeds", type=int, default=None, help="synthesis seeds per game (config: 5)")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds are FIRST..FIRST+N-1 (default 0)")
    parser.add_argument("--budget", type=int, default=None, help="LLM-call budget per synthesis (config: 500)")
    parser.add_argument("--strategy", choices=["tree", "conversation"], default=None)
    parser.add_argument("--num-train", type=int, default=None, help="training games (config: 5)")
    parser.add_argument("--train-pool", type=int, default=None, help="training games are chosen from this many "
                        f"times as many games of random play (config: {DEFAULT_TRAIN_POOL})")
    parser.add_argument("--test-transitions", type=int, default=None,
                        help="held-out test set size in transitions (config: 10000)")
    parser.add_argument("--num-test", type=int, default=None,
                        help="held-out test games instead of --test-transitions (0: none)")
    parser.add_argument("--rules", default=None, metavar="spec|prose|FILE",
                        help="rules in the synthesis prompts: spec (default), prose (rulebook tier) or a file")
    parser.add_argument("--matches", type=int, default=None, help="arena games per seat order (config: 50)")
    parser.add_argument("--sims", type=int, default=None, help="MCTS simulations per move (config: 1000)")
    parser.add_argument("--rollouts", type=int, default=None, help="rollouts per MCTS leaf (config: 10)")
    parser.add_argument("--executor", default=default_executor,
                        help=f"inline | local | local:N | ray[:ADDRESS] (default {default_executor})")
    parser.add_argument("--out", default=None, help="run directory (default runs/<experiment>-<UTC time>)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


_OVERRIDES = ("seeds", "budget", "strategy", "num_train", "train_pool", "test_transitions", "num_test", "matches", "sims",
              "rollouts", "rules")


def game_configs(args: argparse.Namespace, default_games: Sequence[str]) -> tuple[GameConfig, ...]:
    """The configs of the games asked for (``--config`` files, then ``--games``), flags applied on top.

    Raises:
      ExperimentError: a config cannot be read, a game is named twice, a count is out of range
        (:func:`check_config`), or ``--first-seed`` is negative.
    """
    if getattr(args, "first_seed", 0) < 0:
        raise ExperimentError(f"--first-seed must be at least 0, got {args.first_seed}")
    names = [g.strip() for g in (args.games or "").split(",") if g.strip()]
    configs = [load_game_config(p) for p in args.config] + [default_game_config(g) for g in names]
    if not configs:
        configs = [default_game_config(g) for g in default_games]
    overrides = {k: getattr(args, k) for k in _OVERRIDES if getattr(args, k, None) is not None}
    configs = [dataclasses.replace(c, **overrides) for c in configs]
    seen = [games.resolve(c.game).name for c in configs]
    if len(set(seen)) != len(seen):
        raise ExperimentError(f"a game is named twice: {seen}")
    for c in configs:
        check_config(c)
    return tuple(configs)


# The least value of each count in a game config (a flag or a config file key); 0 test games means none.
_MINIMUM = {"seeds": 1, "budget": 1, "num_train": 1, "train_pool": 1, "test_transitions": 1, "num_test": 0, "test_mcts_simulations": 1,
            "matches": 1, "sims": 1, "rollouts": 1}
_OPTIONAL = {"num_test", "test_mcts_simulations"}  # None: the library's default


def check_config(config: GameConfig) -> None:
    """Checks a game config's counts and strategy, so nothing fails later deep inside a run.

    Raises:
      ExperimentError: a count that is not a whole number or is below its least value (``--matches 0``),
        a strategy other than ``tree`` and ``conversation``, or rules that do not exist.
    """
    for key, least in _MINIMUM.items():
        value = getattr(config, key)
        if value is None and key in _OPTIONAL:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            name = f"{key} (--{key.replace('_', '-')})" if key in _OVERRIDES else key
            raise ExperimentError(f"{config.game}: {name} must be a whole number of at least {least}, got {value!r}")
    if config.strategy not in ("tree", "conversation"):
        raise ExperimentError(f"{config.game}: strategy {config.strategy!r} is not 'tree' or 'conversation'")
    try:
        config.spec()
    except CwmError as e:
        raise ExperimentError(f"{config.game}: --rules: {e}") from None


def seeds_of(config: GameConfig, first_seed: int) -> tuple[int, ...]:
    return tuple(range(first_seed, first_seed + config.seeds))


def resolve_llm(spec: str, game: str, rules: str | None = None, seed: int = 0) -> str:
    """``auto`` -> Gemini when an API key is set, else the recording shipped for the game, rules tier and
    synthesis seed (else an error)."""
    from cwm import pipeline

    return pipeline.resolve_llm(spec, game, rules, seed)


def check_llm(spec: str, flag: str) -> None:
    """Builds the provider client of ``spec`` once and drops it (no LLM call is made), so a spec that cannot
    work (unknown provider, no API key, a replay file that is missing) fails before a run directory is
    written. ``batch:DIR`` creates DIR, as the run would.

    Raises:
      ExperimentError: the client cannot be built; the message names ``flag`` and the reason.
    """
    from cwm.llm import provider_client

    try:
        provider_client(spec)
    except (CwmError, OSError) as e:
        raise ExperimentError(f"{flag} {spec!r}: {e}") from e


def check_bundle(game: str, path: Path) -> None:
    """Loads a bundle once (its load check), and checks it models ``game`` and can plan in it.

    Raises:
      ExperimentError: it does not load, models another game, or (imperfect information) has no
        ``inference.py``.
    """
    from cwm import bundle, games

    try:
        loaded = bundle.load_bundle(path, game=game)  # the game as the user named it, module games included
    except bundle.BundleError as e:
        raise ExperimentError(f"bundle for {game}: {e}") from e
    if not games.resolve(game).perfect_information and "inference.py" not in loaded.sources:
        raise ExperimentError(
            f"{game}: bundle {path} has no inference.py; the CWM agent needs an inference function "
            f"to plan with ISMCTS in an imperfect-information game")


def run_directory(out: str | None, experiment: str) -> Path:
    if out:
        return Path(out)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{experiment}-{stamp}"


def begin(out: Path, config: Any) -> None:
    """Creates ``out`` and writes ``config.json``, or checks that it holds the same settings (resume).

    The run directory's own path (a config's ``out``) is not compared: a run moved or copied elsewhere
    resumes from its new place (``config.json`` keeps the path it was started under).

    Raises:
      ExperimentError: ``out`` holds a run with other settings.
    """
    out.mkdir(parents=True, exist_ok=True)
    data = json.loads(json.dumps(dataclasses.asdict(config), default=str))
    path = out / "config.json"
    changed = changed_settings(path, data, ignore={"out"})
    if changed:
        raise ExperimentError(f"{out} holds a run with other settings ({', '.join(changed)} differ); "
                              f"use the same settings to resume, or another --out")
    if not path.is_file():
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def write_record(out: Path, *, experiment: str, config: Any, argv: Sequence[str], llm: dict[str, Any],
                 prompt_hashes: dict[str, Any], seeds: dict[str, list[int]], results: Any,
                 started: _dt.datetime) -> Path:
    """Writes ``out/record.json``: config, LLM model and settings, prompt hashes, seeds, git commit, results."""
    from cwm.synthesis.report import git_commit

    finished = _dt.datetime.now(_dt.timezone.utc)
    record = {
        "experiment": experiment,
        "id": out.name,
        "config": dataclasses.asdict(config),
        "llm": llm,
        "prompt_hashes": prompt_hashes,
        "seeds": seeds,
        "git_commit": git_commit(),
        "command": [f"experiments/{experiment}.py", *argv],
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": finished.isoformat(timespec="seconds"),
        "wall_time_s": round((finished - started).total_seconds(), 3),
        "results": results,
    }
    path = out / "record.json"
    path.write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def policy_prompt_hashes() -> dict[str, str]:
    """Content hashes of the direct-LLM policy's prompt templates (``prompts/policy/``)."""
    import prompts

    folder = resources.files("prompts").joinpath("policy")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".md"))
    return {f"policy/{n}": prompts.prompt_hash(f"policy/{n}") for n in names}


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Rows as CSV (the union of their keys as columns; nested values as JSON text)."""
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns or ["game"])
        writer.writeheader()
        for r in rows:
            writer.writerow({k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in r.items()})


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def script_main(parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace, list[str]], int],
                experiment: str, argv: Sequence[str] | None) -> int:
    """A script's ``main``: ``argv`` (default the command line) parsed by ``parser``, then ``run(args, argv)``
    through ``run_main`` (the argv is kept for the run's record)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    return run_main(lambda: run(args, argv), experiment)


def run_main(body: Callable[[], int], experiment: str) -> int:
    """Runs a script's body: errors cwm raises on purpose print one line and exit 2, as ``cwm`` does."""
    from cwm.cli import EXIT_WAITING
    from cwm.llm import PendingBatch

    try:
        return body()
    except PendingBatch as e:  # not an error: replies are awaited (an LLM agent or synthesis on a batch directory)
        print(f"{experiment}: waiting: {e}", file=sys.stderr)
        return EXIT_WAITING
    except (CwmError, FileNotFoundError) as e:
        print(f"{experiment}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{experiment}: interrupted; rerun the same command with the same --out to resume", file=sys.stderr)
        return 130
