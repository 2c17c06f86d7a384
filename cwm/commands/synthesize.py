"""`cwm synthesize`: let an LLM write a code world model of a game, refined against trajectory checks."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cwm import games
from cwm.llm import (
    PROVENANCE_FILE,
    SPEC_FORMS,
    Client,
    PromptTooLongError,
    ProvenanceError,
    client_provenance,
    make_client,
    refuse_long_text,
    write_provenance,
)
from cwm.llm.provenance import checked_name
from cwm.sandbox.equivalence import EquivalenceSettings
from cwm.selection import TournamentSettings, synthesize_value
from cwm.synthesis import (
    STRATEGIES,
    RequestSettings,
    SynthesisSettings,
    TreeSettings,
    synthesize_encoder,
    synthesize_fast,
    synthesize_inference,
    synthesize_jax,
    synthesize_world_model,
)
from cwm.synthesis.inference_target import VIEW_CHARS
from cwm.synthesis.progress import HELD_OUT_NEXT, ProgressBar, progress_bar  # noqa: F401  (re-exported)
from cwm.synthesis.render import EXAMPLE_CHARS
from cwm.synthesis.report import accuracy_text, possibly_paid, target_words
from cwm.synthesis.settings import DEFAULT_TRAIN_POOL
from cwm.text import counted
from cwm.types import UsageError
from planners.config import SearchConfig


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("synthesize", help="synthesise a code world model of a game with an LLM",
                       description="Writes every prompt, reply, program and check report to --out as it "
                                   "happens; rerun the same command to resume an interrupted run.")
    p.add_argument("game", help="registry name, OpenSpiel game string, or path/to/module.py:short_name")
    p.add_argument("--target", choices=TARGETS, default="world-model",
                   help="what to write: world-model (default), inference (an inference function for --model, "
                        "open deck), joint (a world model and its inference together, closed deck), value "
                        "(value functions for the bundle --from, chosen by a tournament inside its model) or "
                        "encoder (an observation encoder for a PPO policy, written from the observations of the "
                        "bundle --from and saved there as encoder.py) or fast (a faster twin of the model of the "
                        "bundle --from, accepted only on the differential equivalence check and saved there as "
                        "twin.py with its evidence) or jax (a JAX twin of that model, fixed-shape arrays for "
                        "batched play, checked the same way and saved there as jax_twin.py with its evidence)")
    p.add_argument("--deck", choices=("open", "closed"), default=None,
                   help="open: every player's view and the real histories are known (world-model, inference); "
                        "closed: each game only from one player's seat (joint). Default: what the target needs")
    p.add_argument("--hidden", choices=("history", "state"), default="history",
                   help="what an inference function samples (--target inference): history (resample_history, "
                        "default) or state (resample_state: a state standing for the player's information; "
                        "weaker, it need not be reachable)")
    p.add_argument("--model", help="the world model an inference function is written for (--target inference): "
                                   "a .py file, a synthesis run directory (its best program) or a bundle")
    p.add_argument("--from", dest="from_bundle", metavar="BUNDLE",
                   help="the bundle a value function, an encoder or a fast or JAX twin is written for (--target "
                        "value, encoder, fast, jax); the "
                        "value tournament's winner is saved there as value.py with its table "
                        "(value_tournament.json), an accepted encoder as encoder.py")
    p.add_argument("--candidates", type=int, default=5,
                   help="value functions asked for in one prompt and played in the tournament (default 5)")
    p.add_argument("--games-per-pairing", type=int, default=10,
                   help="tournament games of each ordered pairing of two agents, --target value (default 10)")
    p.add_argument("--simulations", type=int, default=1000,
                   help="MCTS simulations per move in the value tournament (default 1000)")
    p.add_argument("--call-s", type=float, default=None,
                   help="CPU seconds one value call may use, --target value (default 0.01); the mean seconds "
                        "of an encoder call, --target encoder (default 0.005)")
    p.add_argument("--detect-rate", type=float, default=0.05, metavar="P",
                   help="--target fast or jax: the divergence rate (per playout of a kind) the equivalence check must "
                        "detect (default 0.05)")
    p.add_argument("--miss-probability", type=float, default=0.01, metavar="DELTA",
                   help="--target fast or jax: the largest probability of missing a divergence of that rate (default "
                        "0.01); each playout kind is played ceil(ln DELTA / ln(1 - P)) times")
    p.add_argument("--playout-simulations", type=int, default=50,
                   help="--target fast or jax: MCTS simulations per move of the check's MCTS-guided playouts (default 50)")
    p.add_argument("--playouts-per-child", type=int, default=0,
                   help="--target fast or jax: the reference's playouts played in one sandbox child, each child under "
                        "the check's CPU limit (default 0: all in one child; 1 for a model too slow for that)")
    p.add_argument("--executor", default="local",
                   help="runs the value tournament's games: local, local:N, inline, ray[:ADDRESS] (default local)")
    _run_arguments(p)
    p.set_defaults(func=cmd_synthesize)


def _run_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of the run every target shares: the LLM, the loop, the games, the prompt, the sandbox."""
    p.add_argument("--llm", default="gemini", help=f"{SPEC_FORMS} (default gemini)")
    p.add_argument("--answered-by", metavar="NAME",
                   help="who answers the requests, as precisely as known (at most 120 characters): kept in the run's "
                        "provenance.json and the bundle's manifest where the client cannot say it itself (batch "
                        "replies that name no model, a replay without a provenance file)")
    p.add_argument("--strategy", choices=STRATEGIES, default="tree", help="refinement strategy (default tree)")
    p.add_argument("--budget", type=int, default=500, help="most LLM calls (default 500)")
    p.add_argument("--seed", type=int, default=0, help="seeds the games and the search (default 0)")
    p.add_argument("--out", required=True, help="run directory (resumed if it holds this run)")
    p.add_argument("--rules", default=None, metavar="spec|prose|FILE",
                   help="the rules in the prompts: spec (default: the specification tier), prose (the rulebook "
                        "tier, `cwm games` lists which games have it) or a rules file")
    p.add_argument("--num-train", type=int, default=5, help="training games of random play (default 5)")
    p.add_argument("--train-pool", type=int, default=DEFAULT_TRAIN_POOL,
                   help="choose the training games from this many times as many games of random play, to show "
                        f"every kind of event they hold (default {DEFAULT_TRAIN_POOL}; 1: the first games)")
    p.add_argument("--num-test", type=int, default=None,
                   help="held-out games, half random, half MCTS (default: sized by --test-transitions; 0: none)")
    p.add_argument("--test-transitions", type=int, default=10_000,
                   help="held-out transitions, half random, half MCTS play, generated once per game, seed and "
                        "settings and shared through the cache (default 10000, the paper's)")
    p.add_argument("--test-mcts-simulations", type=int, default=None,
                   help="MCTS simulations per move of the held-out MCTS games (default 100; 25 for a game "
                        "longer than 200 moves at most)")
    p.add_argument("--test-executor", default="local",
                   help="where held-out games are played: local (default), local:N, inline, ray[:ADDRESS]")
    p.add_argument("--concurrency", type=int, default=1, help="LLM calls in flight at once, tree only (default 1)")
    p.add_argument("--c", type=float, default=5.0, help="Thompson-sampling concentration C (default 5)")
    p.add_argument("--paper-beta", action="store_true",
                   help="the paper's Beta(1+C*h, 1+C*(1-h)) without REx's refinement count in beta "
                        "(default: beta counts the node's refinements, so a stuck node is chosen less often)")
    p.add_argument("--min-gain", type=float, default=0.0,
                   help="how much a refinement must improve on its parent to be refined itself, as a fraction of "
                        "checks (default 0: any improvement; the paper's 0.01, also what runs before this default "
                        "were made with, so they resume with it)")
    p.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    p.add_argument("--max-output-tokens", type=int, default=16384, help="cap per reply (default 16384)")
    p.add_argument("--max-steps-shown", type=int, help="cut each example game in the prompt (default: whole games)")
    p.add_argument("--max-example-chars", type=int,
                   help="list whole example games (inference targets: player views) in the first prompt while "
                        "they fit in N characters; the checks use them all (default 70000; inference 40000)")
    p.add_argument("--cache", help="SQLite LLM cache file shared across runs (default none)")
    p.add_argument("--max-prompt-tokens", type=int, help="refuse, unsent, a prompt estimated above N tokens "
                   "(default: the model's context window; 32768 for a model without a known one)")
    p.add_argument("--no-sandbox", action="store_true", help="check candidates in-process (trusted replies only)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


# flag -> (attribute, smallest valid value); checked before anything is written under --out
_AT_LEAST: dict[str, tuple[str, float]] = {
    "--budget": ("budget", 1), "--num-train": ("num_train", 1), "--train-pool": ("train_pool", 1), "--num-test": ("num_test", 0),
    "--test-mcts-simulations": ("test_mcts_simulations", 1), "--test-transitions": ("test_transitions", 1),
    "--concurrency": ("concurrency", 1),
    "--c": ("c", 0), "--temperature": ("temperature", 0), "--max-output-tokens": ("max_output_tokens", 1),
    "--max-steps-shown": ("max_steps_shown", 1), "--max-prompt-tokens": ("max_prompt_tokens", 1),
    "--max-example-chars": ("max_example_chars", 1),
    "--candidates": ("candidates", 1), "--games-per-pairing": ("games_per_pairing", 1),
    "--simulations": ("simulations", 1), "--call-s": ("call_s", 1e-6),
}


def check_args(args: argparse.Namespace) -> None:
    """Refuses out-of-range numbers (a negative --num-test used to mean none, a --max-steps-shown of 0
    or less cut games wrongly in the prompt).

    Raises:
      UsageError: names the flag, its value and the smallest valid one.
    """
    for flag, (name, low) in _AT_LEAST.items():
        value = vars(args)[name]
        if value is not None and not value >= low:
            raise UsageError(f"{flag} must be >= {low:g}, got {value}")
    if getattr(args, "answered_by", None) is not None:
        try:
            checked_name(args.answered_by, where="--answered-by", field="NAME")
        except ProvenanceError as e:
            raise UsageError(str(e)) from None


def record_provenance(args: argparse.Namespace, llm: Client, out: Path) -> None:
    """Writes who answered the run's requests and how (``cwm.llm.client_provenance``) to ``out/provenance.json``,
    where ``cwm export`` and ``cwm run``'s report find it."""
    write_provenance(out / PROVENANCE_FILE, client_provenance(llm, answered_by=args.answered_by))


TARGETS = ("world-model", "inference", "joint", "value", "encoder", "fast", "jax")
INFERENCE_TEST_GAMES = 100  # an inference target's held-out games of random play when --num-test is not given
FROM_BUNDLE = ("value", "encoder", "fast", "jax")  # the targets written for a bundle (--from)


def target_settings(args: argparse.Namespace) -> tuple[str, str | None]:
    """The deck the target runs on and, for an inference target, the world model's source.

    Raises:
      UsageError: a deck the target cannot use, or --model missing, unreadable or given for another target.
    """
    deck = args.deck or ("closed" if args.target == "joint" else "open")
    needs = {"world-model": "open", "inference": "open", "joint": "closed", "value": "open",
             "encoder": "open", "fast": "open", "jax": "open"}[args.target]
    if deck != needs:
        raise UsageError(f"--target {args.target} runs on the {needs} deck, not --deck {deck} (the closed deck is "
                         f"--target joint: a world model and its inference written together)")
    if args.hidden != "history" and args.target != "inference":
        raise UsageError(f"--hidden {args.hidden} is a variant of --target inference (open deck), not of "
                         f"--target {args.target}")
    if (args.target in FROM_BUNDLE) != bool(args.from_bundle):
        raise UsageError(f"--target {args.target} needs --from BUNDLE: the bundle (cwm export) whose game and model "
                         f"the {args.target} is for" if args.target in FROM_BUNDLE else
                         f"--from is the bundle a value function is written for (--target value), or an encoder "
                         f"(--target encoder); --target {args.target} does not take one")
    if args.target != "inference":
        if args.model:
            raise UsageError(f"--model is the world model an inference function is written for; --target "
                             f"{args.target} does not take one")
        return deck, None
    if not args.model:
        raise UsageError("--target inference needs --model: the world model (a .py file, a synthesis run "
                         "directory or a bundle) the inference function is written for")
    return deck, world_model_source(Path(args.model))


def world_model_source(path: Path) -> str:
    """The world model's source in a .py file, a synthesis run directory (best_program.py) or a bundle (model.py).

    Raises:
      UsageError: none of those, or not UTF-8.
    """
    for candidate in (path, path / "best_program.py", path / "model.py"):
        if candidate.is_file() and candidate.suffix == ".py":
            try:
                return candidate.read_text(encoding="utf-8")
            except UnicodeDecodeError as e:
                raise UsageError(f"{candidate}: not UTF-8 ({e.reason} at byte {e.start})") from None
    raise UsageError(f"--model {str(path)!r} is neither a .py file, nor a synthesis run directory with "
                     f"best_program.py, nor a bundle with model.py")


def synthesis_settings(args: argparse.Namespace, deck: str = "open") -> SynthesisSettings:
    """The settings of ``--target`` from the flags (the target's own defaults where a flag is unset)."""
    common: dict[str, Any] = {
        "budget": args.budget, "seed": args.seed, "concurrency": args.concurrency, "isolate": not args.no_sandbox,
        "tree": TreeSettings(c=args.c, count_refinements=not args.paper_beta, min_gain=args.min_gain),
        "request": RequestSettings(temperature=args.temperature, max_output_tokens=args.max_output_tokens)}
    if args.target == "world-model":
        return SynthesisSettings.of(
            "world_model", **common, strategy=args.strategy, num_train=args.num_train, train_pool=args.train_pool,
            num_test=args.num_test,
            test_mcts_simulations=args.test_mcts_simulations, test_transitions=args.test_transitions,
            test_executor=args.test_executor, max_steps_shown=args.max_steps_shown,
            max_example_chars=args.max_example_chars or EXAMPLE_CHARS)
    if args.target in ("inference", "joint"):
        return SynthesisSettings.of(
            "inference", **common, strategy=args.strategy, num_train=args.num_train, train_pool=args.train_pool, deck=deck,
            hidden=args.hidden,
            num_test=INFERENCE_TEST_GAMES if args.num_test is None else args.num_test,
            max_example_chars=args.max_example_chars or VIEW_CHARS)
    if args.target in ("fast", "jax"):
        return SynthesisSettings.of(args.target, **common)
    target = "value" if args.target == "value" else "encoder"
    extra = {"candidates": args.candidates} if target == "value" else {}
    return SynthesisSettings.of(target, **common, **extra,
                                **({"call_s": args.call_s} if args.call_s is not None else {}))


def _with_bar(bar: ProgressBar | None, run: Callable[[Any], Any]) -> Any:
    """``run(progress)`` with the bar's update as its progress callback; the bar is closed when it returns or
    raises, before anything else is printed. A prompt too long to send is told this command's flag that
    shortens example games."""
    try:
        return run(None if bar is None else bar.update_from)
    except PromptTooLongError as e:
        raise PromptTooLongError(f"{e}; example games are cut with --max-steps-shown N or --max-example-chars N",
                                 estimate=e.estimate, limit=e.limit) from None
    finally:
        if bar is not None:
            bar.close()


def cmd_synthesize(args: argparse.Namespace) -> int:
    check_args(args)
    deck, world_model = target_settings(args)
    out = Path(args.out)
    spec = games.resolve(args.game, rules=args.rules)
    rules = games.rules_text(spec)  # a game without rules fails here, before an LLM is configured or a bar drawn
    # the client's own limit must not cap --concurrency below what was asked
    llm = make_client(args.llm, run_dir=out, cache=Path(args.cache) if args.cache else None,
                      max_concurrency=max(8, args.concurrency), max_prompt_tokens=args.max_prompt_tokens)
    limit = getattr(llm, "max_prompt_tokens", None)  # a client that states a prompt limit (every one cwm makes)
    if limit is not None:
        refuse_long_text(rules, limit, what=f"the rules of {spec.name} ({spec.rules})")
    bar = None if args.quiet else progress_bar(args.budget)
    if args.target == "value":
        return _value(args, spec, llm, out, bar)
    if args.target == "encoder":
        return _encoder(args, spec, llm, out, bar)
    if args.target in ("fast", "jax"):
        return _fast(args, spec, llm, out, bar)
    if args.target != "world-model":
        return _inference(args, spec, llm, out, bar, deck, world_model)
    result = _with_bar(bar, lambda progress: synthesize_world_model(
            spec, llm, synthesis_settings(args), run_dir=out, progress=progress))
    record_provenance(args, llm, out)
    test = accuracy_text(result.test_accuracy, result.test_checked, result.test_games)
    print(f"{result.game}: {'solved' if result.solved else 'not solved'} after {counted(result.llm_calls, 'LLM call')}; "
          f"{target_words(result.target)[1]} train {result.train_accuracy:.4f}, test {test}; cost ${result.cost_usd:.4f}"
          f"{possibly_paid(result)}")
    print(f"best program: {out / 'best_program.py'}; summary: {out / 'summary.md'}; plot: {out / 'accuracy.png'}")
    return 0


def _inference(args: argparse.Namespace, spec: games.GameSpec, llm: Any, out: Path, bar: ProgressBar | None,
               deck: str, world_model: str | None) -> int:
    result = _with_bar(bar, lambda progress: synthesize_inference(
            spec, llm, synthesis_settings(args, deck), run_dir=out, world_model=world_model, progress=progress))
    record_provenance(args, llm, out)
    test = accuracy_text(result.test_accuracy, result.test_checked, result.test_games)
    print(f"{result.game} ({result.target}, {deck} deck): {'solved' if result.solved else 'not solved'} after "
          f"{counted(result.llm_calls, 'LLM call')}; {target_words(result.target)[1]} train {result.train_accuracy:.4f}, test {test}; "
          f"cost ${result.cost_usd:.4f}{possibly_paid(result)}")
    print(f"best program: {out / 'best_program.py'}; summary: {out / 'summary.md'}")
    return 0


def _value(args: argparse.Namespace, spec: games.GameSpec, llm: Any, out: Path, bar: ProgressBar | None) -> int:
    tournament = TournamentSettings(games_per_pairing=args.games_per_pairing,
                                    search=SearchConfig(num_simulations=args.simulations), executor=args.executor,
                                    progress=not args.quiet)
    result = _with_bar(bar, lambda progress: synthesize_value(
            spec, llm, synthesis_settings(args), run_dir=out, bundle=args.from_bundle, tournament=tournament,
            progress=progress))
    synthesis = result.synthesis
    print(f"{synthesis.game} (value): {len(result.played)} candidate(s) passed their checks after "
          f"{counted(synthesis.llm_calls, 'LLM call')}; cost ${synthesis.cost_usd:.4f}{possibly_paid(synthesis)}")
    if result.tournament is None:
        print(f"no candidate passed every value check; {result.bundle} is unchanged (see {out / 'summary.md'})")
        return 1
    kept = f"{result.tournament.winner} saved as value.py" if result.winner else "rollouts won; no value.py kept"
    print(f"tournament: {kept} in {result.bundle} (table: value_tournament.json; {out / 'tournament' / 'tournament.md'})")
    return 0


def _encoder(args: argparse.Namespace, spec: games.GameSpec, llm: Any, out: Path, bar: ProgressBar | None) -> int:
    result = _with_bar(bar, lambda progress: synthesize_encoder(
            spec, llm, synthesis_settings(args), run_dir=out, bundle=args.from_bundle, progress=progress))
    synthesis = result.synthesis
    print(f"{synthesis.game} (encoder): {'an encoder passed every check' if result.encoder else 'no encoder passed'} "
          f"after {counted(synthesis.llm_calls, 'LLM call')}; cost ${synthesis.cost_usd:.4f}{possibly_paid(synthesis)}")
    if result.encoder is None:
        print(f"{result.bundle} is unchanged (see {out / 'summary.md'})")
        return 1
    print(f"saved as {Path(result.bundle) / 'encoder.py'}; summary: {out / 'summary.md'}")
    return 0


def _fast(args: argparse.Namespace, spec: games.GameSpec, llm: Any, out: Path, bar: ProgressBar | None) -> int:
    """--target fast or jax: a twin of the bundle's model, saved there with its evidence."""
    equivalence = EquivalenceSettings(p=args.detect_rate, delta=args.miss_probability,
                                      simulations=args.playout_simulations, playouts_per_child=args.playouts_per_child)
    synthesize, what, files = ((synthesize_fast, "fast twin", ("twin.py", "twin_evidence.json")) if args.target == "fast"
                               else (synthesize_jax, "JAX twin", ("jax_twin.py", "jax_twin_evidence.json")))
    result = _with_bar(bar, lambda progress: synthesize(
            spec, llm, synthesis_settings(args), run_dir=out, bundle=args.from_bundle, equivalence=equivalence,
            progress=progress))
    record_provenance(args, llm, out)
    synthesis = result.synthesis
    print(f"{synthesis.game} ({what}): {'a twin passed the equivalence check' if result.twin else 'no twin passed'} "
          f"after {counted(synthesis.llm_calls, 'LLM call')}; cost ${synthesis.cost_usd:.4f}{possibly_paid(synthesis)}")
    if result.twin is None:
        print(f"{result.bundle} is unchanged (see {out / 'summary.md'})")
        return 1
    print(f"saved as {Path(result.bundle) / files[0]} with {Path(result.bundle) / files[1]}: "
          f"{result.evidence['reason'] if result.evidence else ''}")
    return 0
