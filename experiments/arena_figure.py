"""The paper's Figure 2: the CWM agent against random, the ground-truth planner and the direct LLM policy.

For each game the CWM agent plays a bundle (``--bundles GAME=PATH``, or one synthesized here with
``--llm`` and exported) with (IS)MCTS, in the real game, against ``random``, the ground-truth planner
(``gt-mcts`` for perfect information, ``gt-ismcts`` for imperfect) and, with ``--direct-llm SPEC``, the
LLM used directly as the policy (``llm:SPEC``), in both seats (``cwm.arena.tournament``). An
imperfect-information game's bundle holds its inference function too (``--deck open``: synthesized for the
world model after it; ``--deck closed``: both as one program); a game whose recorded session does not exist
is a row saying so. ``--protocol paper`` synthesizes ``--seeds N`` bundles per game, and under ``--llm auto``
with no key each seed replays its own recorded session (seed 0: ``GAME.jsonl``, seed S:
``seeds/GAME.seed<S>.jsonl``); a seed without one is refused before anything runs. Writes
``arena.md``, ``arena.json``, ``arena.csv``, ``arena.png`` and ``record.json``; each game's full
tournament (every match, per-seat tables, a plot) is under ``<game>/arena/``.

    python experiments/arena_figure.py --llm gemini --direct-llm gemini --out runs/fig2           # paper-sized
    python experiments/arena_figure.py --games tic_tac_toe --matches 4 --sims 50 --num-test 4     # offline
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository root importable for `experiments`
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from cwm.executors import Executor, make_executor
from cwm.synthesis import SynthesisSettings
from experiments import common, figure_report, imperfect

EXPERIMENT = "arena_figure"
PROTOCOLS = ("single", "paper")


@dataclasses.dataclass(frozen=True)
class ArenaFigureConfig:
    """Everything that decides the figure (written into ``config.json`` and ``record.json``).

    Attributes:
      games: per-game settings (from ``experiments/configs/`` with the flags applied).
      llm: LLM spec that synthesizes the bundles not given (``auto`` resolves per game).
      bundles: ``(game, bundle directory)`` pairs given with ``--bundles``.
      direct_llm: client spec of the direct LLM policy opponent, or ``None`` for none.
      deck: how the bundles of imperfect-information games are synthesized: ``open`` (a world model, then an
        inference function for it) or ``closed`` (both together, from one player's view).
      recordings: the folder of recorded sessions of imperfect-information games, or ``None`` for cwm's.
      seed: seeds the synthesis of missing bundles and the tournaments.
      move_time_limit: seconds per move before a forfeit, or ``None``.
      cache: SQLite LLM cache file for synthesis, or ``None``.
      executor: where the matches run.
      out: the run directory.
      protocol: ``single`` (one synthesis per game, at ``seed``) or ``paper`` (the game config's ``seeds``
        syntheses at ``seed``, ``seed + 1``, ...; sample rejection among them, ``cwm.selection``; the CWM agent
        draws a surviving model per match, ``cwm-selected:``; the figure shows each synthesis's share).
      select_games: with ``paper``, games per host and ordered pairing of the selection (paper: 50).
    """

    games: tuple[common.GameConfig, ...]
    llm: str
    bundles: tuple[tuple[str, str], ...]
    direct_llm: str | None
    deck: str
    recordings: str | None
    seed: int
    move_time_limit: float | None
    cache: str | None
    executor: str
    out: str
    protocol: str = "single"
    select_games: int = 50


def parse_bundles(items: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``GAME=PATH`` items (each may itself be comma-separated) as ``(registry name, absolute path)`` pairs.

    Raises:
      ExperimentError: an item without ``=``, or a path that is not a directory.
    """
    from cwm import games

    pairs = []
    for item in (part for text in items for part in text.split(",") if part.strip()):
        game, sep, path = item.partition("=")
        if not sep or not game.strip() or not path.strip():
            raise common.ExperimentError(f"--bundles {item!r}: expected GAME=PATH")
        if not Path(path).is_dir():
            raise common.ExperimentError(f"--bundles {item!r}: {path} is not a bundle directory")
        pairs.append((games.resolve(game.strip()).name, str(Path(path).resolve())))
    return tuple(pairs)


def opponents(game: str, direct_llm: str | None) -> list[str]:
    """Random, the ground-truth planner of the game's information type, and optionally the direct LLM."""
    from cwm import games

    truth = "gt-mcts" if games.resolve(game).perfect_information else "gt-ismcts"
    return ["random", truth] + ([f"llm:{direct_llm}"] if direct_llm else [])


def check_inputs(figure: ArenaFigureConfig, out: Path) -> dict[str, str | imperfect.NoRecording | None]:
    """Checks everything a figure run needs before it writes anything, so a mistake costs no run directory.

    Returns:
      per game (its ``config.game``): the LLM spec that will synthesize its bundle, ``None`` when a bundle is
      given or was already exported under ``out``, or ``NoRecording`` for an imperfect-information game to be
      synthesized from a recorded session that does not exist (its rows say so).

    Raises:
      ExperimentError: a bundle for a game not asked for, named twice, unloadable, of another game, or
        (imperfect information) without ``inference.py``; an LLM spec that cannot be built (no key, no
        recording of a perfect-information game, missing replay file); a non-positive ``--move-time-limit``.
    """
    from cwm import games

    names = {games.resolve(c.game).name: c.game for c in figure.games}
    rules = {c.game: c.rules for c in figure.games}
    given = [g for g, _ in figure.bundles]
    for game in given:
        if game not in names:
            raise common.ExperimentError(f"--bundles names {game}, which is not among the games {sorted(names)}")
        if given.count(game) > 1:
            raise common.ExperimentError(f"--bundles names {game} twice")
    if figure.move_time_limit is not None and not figure.move_time_limit > 0:
        raise common.ExperimentError(f"--move-time-limit must be above 0 seconds, got {figure.move_time_limit}")
    for game, path in figure.bundles:
        common.check_bundle(game, Path(path))
    llms = {names[n]: _synthesis_llm(names[n], figure, out, rules[names[n]]) for n in names if n not in given}
    if figure.direct_llm:
        common.check_llm(figure.direct_llm, "--direct-llm")
    return llms


def _synthesis_llm(game: str, figure: ArenaFigureConfig, out: Path, rules: str = "spec",
                   seed: int | None = None) -> str | imperfect.NoRecording | None:
    """The checked LLM spec that synthesizes ``game``'s bundle (``None``: exported by an earlier run; for an
    imperfect-information game, ``NoRecording`` when its recorded session on the deck does not exist).
    ``seed``: the bundle of that synthesis seed under ``--protocol paper`` (``syntheses/seed<S>/``), replaying
    that seed's recorded session under ``auto``; else the one bundle, at ``figure.seed``."""
    from cwm import games

    spec = games.resolve(game)
    folder = out / game / ("bundle" if seed is None else f"syntheses/seed{seed}/bundle")
    if (folder / "manifest.json").is_file():
        return None
    seed = figure.seed if seed is None else seed
    if not spec.perfect_information:
        return imperfect.game_llm(figure.llm, game, figure.deck, figure.recordings, rules, seed)
    llm = common.resolve_llm(figure.llm, game, rules, seed)
    common.check_llm(llm, f"--llm for {spec.name}" + (f" seed {seed}" if seed else ""))
    return llm


def paper_llms(figure: ArenaFigureConfig, out: Path) -> dict[str, dict[int, str | None]]:
    """Under ``--protocol paper``: per game (its ``config.game``) and synthesis seed, the checked LLM spec of
    that seed's bundle (``None``: exported by an earlier run), so that each seed replays its own recorded
    session. A game with no recorded session at its first seed is left out (its row says so, as with one
    synthesis).

    Raises:
      ExperimentError: a later seed of a game has no recorded session (one line naming game, tier and seed),
        or a spec cannot be built.
      PipelineError: a perfect-information game has no recorded session for a seed under ``auto``.
    """
    llms: dict[str, dict[int, str | None]] = {}
    for c in figure.games:
        seeds = common.seeds_of(c, figure.seed)
        found = {seed: _synthesis_llm(c.game, figure, out, c.rules or "spec", seed) for seed in seeds}
        if isinstance(found[seeds[0]], imperfect.NoRecording):
            continue
        llms[c.game] = {seed: None if llm is None else imperfect.require_recording(
            llm, deck=figure.deck, rules=c.rules or "spec", seed=seed) for seed, llm in found.items()}
    return llms


def obtain_bundle(config: common.GameConfig, figure: ArenaFigureConfig, out: Path, llm: str | None) -> Path:
    """The game's bundle: the one given, else synthesize (resumable) into ``out/synthesis`` with ``llm`` (the
    spec :func:`check_inputs` checked) and export it, checking it loads."""
    from cwm import games

    name = games.resolve(config.game).name
    given = dict(figure.bundles).get(name)
    if given:
        return Path(given)
    target = out / "bundle"
    if not (target / "manifest.json").is_file():
        if llm is None:
            raise common.ExperimentError(f"{name}: no bundle in {target} and no LLM to synthesize one")
        _synthesize(config, figure, out / "synthesis", llm, target)
    common.check_bundle(name, target)
    return target


def _synthesize(config: common.GameConfig, figure: ArenaFigureConfig, run_dir: Path, llm: str, target: Path) -> None:
    """Synthesizes the bundle's programs and exports them: a world model (perfect information); a world model,
    then its inference function in ``inference/`` beside ``run_dir`` (open deck); or both as one program
    (closed deck)."""
    from cwm import bundle, games

    imperfect_game = not games.resolve(config.game).perfect_information
    closed = imperfect_game and figure.deck == "closed"
    world_model = None if closed else _world_model(config, figure, run_dir, llm)
    inference_run = run_dir.parent / "inference" if imperfect_game and not closed else None
    if imperfect_game:
        result = imperfect.synthesize_inference(config, seed=figure.seed, llm=llm, run_dir=inference_run or run_dir,
                                                deck=figure.deck, world_model=world_model, cache=figure.cache)
        if not result.best_source:
            raise common.ExperimentError(f"{config.game}: {result.target} synthesis produced no usable program "
                                         f"(see {inference_run or run_dir}/summary.md)")
    bundle.export_run(run_dir, target, inference_run=inference_run)


def _world_model(config: common.GameConfig, figure: ArenaFigureConfig, run_dir: Path, llm: str) -> str:
    from cwm.llm import PROVENANCE_FILE, client_provenance, make_client, write_provenance
    from cwm.synthesis import synthesize_world_model

    client = make_client(llm, run_dir=run_dir, cache=Path(figure.cache) if figure.cache else None)
    result = synthesize_world_model(config.spec(), client, SynthesisSettings.of("world_model", budget=config.budget, seed=figure.seed, strategy=config.strategy, num_train=config.num_train, train_pool=config.train_pool, num_test=config.num_test, test_transitions=config.test_transitions, test_mcts_simulations=config.test_mcts_simulations), run_dir=run_dir)
    write_provenance(run_dir / PROVENANCE_FILE, client_provenance(client))  # who answered: into the manifest
    if not result.best_source:
        raise common.ExperimentError(
            f"{config.game}: synthesis produced no usable program (see {run_dir}/summary.md)")
    return result.best_source


CWM_LABEL = "cwm"  # the CWM agent's name in every table: the same wherever the run directory or bundle is
SELECTED_LABEL = "cwm-selected"  # its name under --protocol paper, where it draws a surviving synthesis per match


def play(config: common.GameConfig, figure: ArenaFigureConfig, bundle_dir: Path, out: Path,
         executor: Executor, progress: bool, yes: bool = False, agent: str | None = None
         ) -> tuple[list[dict[str, Any]], list[Any]]:
    """The CWM agent (on a checked bundle, labelled ``cwm``) against each opponent, both seats; its
    pooled-seat summary rows, and the matches (for the leaderboard across games). Finished matches are found by content (``cwm.arena.identity``), wherever the
    bundle is. The cost estimate (``cwm.arena.cost``) is
    printed and confirmed first, and written with the real wall time to ``out/cost.json``."""
    from cwm import arena, games
    from cwm.agents.specs import Settings
    from cwm.arena import cost
    from cwm.arena import report as arena_report
    from planners.config import SearchConfig

    spec = games.resolve(config.game)
    opps = opponents(spec.name, figure.direct_llm)
    label = SELECTED_LABEL if agent else CWM_LABEL
    agents = [f"{label}={agent or f'cwm:{bundle_dir.resolve()}'}", *opps]
    plan = arena.TournamentPlan(
        matches=config.matches, seed=figure.seed, move_time_limit=figure.move_time_limit,
        settings=Settings(search=SearchConfig(num_simulations=config.sims, rollouts=config.rollouts)),
        pairings=[(label, o) for o in opps])
    estimate = cost.estimate_tournament(spec.name, agents, plan, executor=figure.executor, out_dir=out)
    cost.confirm(estimate, yes=yes)
    start = time.perf_counter()
    results = arena.tournament(spec.name, agents, plan, out_dir=out, executor=executor, progress=progress)
    cost.write_record(out / "cost.json", estimate, time.perf_counter() - start)
    rows = [r for r in arena_report.summarize(results) if r["agent"] == label and r["seat"] == "all"]
    order = {o: i for i, o in enumerate(opps)}
    rows.sort(key=lambda r: order[r["opponent"]])
    paired = {c["opponent"]: c for c in arena_report.paired_comparisons(spec, results) if c["agent"] == label}
    settings = f"{config.sims} simulations, {config.rollouts} rollouts per leaf"
    return [{"game": spec.name, "outcome": spec.outcome, "settings": settings} | _clean(r)
            | {"paired": paired.get(str(r["opponent"]))} for r in rows], results


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    """The row with non-finite numbers (a mean over no matches) as ``None``, so the JSON stays standard."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in row.items()}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=EXPERIMENT, description=__doc__.splitlines()[0])
    common.add_common_args(p, default_executor="local")
    p.add_argument("--bundles", action="append", default=[], metavar="GAME=PATH",
                   help="use this bundle for GAME instead of synthesizing one (may be repeated)")
    p.add_argument("--direct-llm", default=None, metavar="SPEC",
                   help="also play the LLM directly as the policy (llm:SPEC; e.g. gemini, openai:MODEL)")
    p.add_argument("--move-time-limit", type=float, default=None, help="seconds per move before a forfeit")
    p.add_argument("--deck", choices=imperfect.DECKS, default="open",
                   help="imperfect-information bundles: open (world model, then inference; default) or closed "
                        "(both together, from one player's view)")
    p.add_argument("--recordings", default=None, metavar="DIR", help="recorded sessions of imperfect-information "
                   "games: DIR/<game>.jsonl (open deck), DIR/closed/<game>.jsonl (default: cwm's, a real model's session under real/ in preference to a scripted demo)")
    p.add_argument("--protocol", choices=PROTOCOLS, default="single",
                   help="single: one synthesis per game (default); paper: --seeds syntheses per game (config: 5), "
                        "sample rejection among them (cwm select), a surviving model drawn per match")
    p.add_argument("--select-games", type=int, default=50, metavar="N",
                   help="--protocol paper: games per host and ordered pairing of the selection (paper: 50)")
    p.add_argument("--yes", action="store_true",
                   help="play a game's tournament even when its projected wall time is over the threshold "
                        "(refused without it, from a terminal or a script; the estimate is always printed)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return common.script_main(parser(), _run, EXPERIMENT, argv)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    started = _dt.datetime.now(_dt.timezone.utc)
    if args.protocol == "single" and args.seeds is not None and args.seeds != 1:
        raise common.ExperimentError("arena_figure plays one bundle per game; choose its seed with --first-seed "
                                     "(--seeds N is for synthesis_table, or for --protocol paper)")
    if args.protocol == "paper" and args.bundles:
        raise common.ExperimentError("--protocol paper synthesizes its own bundles (one per seed): --bundles is "
                                     "for --protocol single")
    if args.select_games < 1:
        raise common.ExperimentError(f"--select-games must be >= 1, got {args.select_games}")
    configs = common.game_configs(args, common.PERFECT_INFORMATION_GAMES)
    out = common.run_directory(args.out, EXPERIMENT)
    figure = ArenaFigureConfig(configs, args.llm, parse_bundles(args.bundles), args.direct_llm, args.deck,
                               args.recordings, args.first_seed, args.move_time_limit, args.cache, args.executor,
                               str(out), args.protocol, args.select_games)
    llms = check_inputs(figure, out)
    seeded = paper_llms(figure, out) if figure.protocol == "paper" else {}  # each seed its own session
    executor = make_executor(args.executor)  # a bad spec or an unreachable cluster fails before config.json
    try:
        common.begin(out, figure)
        rows, bundles, matches = _play_all(figure, (llms, seeded), executor, out, quiet=args.quiet, yes=args.yes)
    finally:
        executor.close()
    _write(out, figure, argv, rows, bundles, figure_report.leaderboard(matches), started)
    print(f"table: {out / 'arena.md'}; figure: {out / 'arena.png'}")
    return 0


def _play_all(figure: ArenaFigureConfig,
              specs: tuple[dict[str, str | imperfect.NoRecording | None], dict[str, dict[int, str | None]]],
              executor: Executor, out: Path, *, quiet: bool, yes: bool = False
              ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, list[Any]]]:
    """Each game's summary rows, bundle provenance and matches (a game with no recording: a row saying so);
    ``specs``: :func:`check_inputs`'s LLM per game and, under ``--protocol paper``, :func:`paper_llms`'s per
    game and seed."""
    llms, seeded = specs
    rows: list[dict[str, Any]] = []
    bundles: dict[str, dict[str, Any]] = {}
    matches: dict[str, list[Any]] = {}
    for config in figure.games:
        llm = llms.get(config.game)
        if isinstance(llm, imperfect.NoRecording):
            rows.append(llm.row())
            if not quiet:
                print(f"{llm.game}: no recording ({llm.path}); not played", flush=True)
            continue
        game_dir = out / config.game
        if figure.protocol == "paper":
            game_rows, found, bundles[config.game] = _play_paper(config, figure, game_dir, seeded[config.game], executor,
                                                                 quiet=quiet, yes=yes)
        else:
            bundle_dir = obtain_bundle(config, figure, game_dir, llm)
            game_rows, found = play(config, figure, bundle_dir, game_dir / "arena", executor, progress=not quiet,
                                    yes=yes)
            bundles[game_rows[0]["game"]] = figure_report.provenance(bundle_dir)
        rows += game_rows
        matches[game_rows[0]["game"]] = found
        if not quiet:
            for r in game_rows:
                print(f"{r['game']} vs {r['opponent']}: win {r['win_rate']:.2f}, draw {r['draw_rate']:.2f}, "
                      f"loss {r['loss_rate']:.2f} ({r['matches']} matches)", flush=True)
    return rows, bundles, matches


def _play_paper(config: common.GameConfig, figure: ArenaFigureConfig, game_dir: Path, llms: dict[int, str | None],
                executor: Executor, *, quiet: bool, yes: bool) -> tuple[list[dict[str, Any]], list[Any], dict[str, Any]]:
    """The paper's protocol on one game: a synthesis per seed (each exported to ``syntheses/seed<S>/bundle``,
    with that seed's LLM spec from ``llms``, :func:`paper_llms`: under ``auto``, that seed's recorded session),
    sample rejection among them (``selection/``), then the CWM agent drawing a surviving model per match
    against each opponent. The rows carry ``syntheses``: each synthesis's seed, provenance, selection score,
    whether it survived, and the matches it was drawn for with their outcome against each opponent."""
    from cwm import games
    from cwm.agents.specs import Settings
    from cwm.selection import SelectionSettings, select_models
    from planners.config import SearchConfig

    name = games.resolve(config.game).name
    seeds = common.seeds_of(config, figure.seed)
    if len(seeds) < 2:
        raise common.ExperimentError(f"{name}: --protocol paper needs at least two syntheses (--seeds N, N >= 2)")
    paths = [obtain_bundle(config, dataclasses.replace(figure, seed=seed), game_dir / "syntheses" / f"seed{seed}", llms[seed])
             for seed in seeds]
    search = SearchConfig(num_simulations=config.sims, rollouts=config.rollouts)
    selection = select_models(name, paths, game_dir / "selection",
                              SelectionSettings(hosts=min(2, len(paths)), games_per_pairing=figure.select_games,
                                                agents=Settings(search=search), seed=figure.seed,
                                                executor=executor, progress=not quiet))
    rows, found = play(config, figure, paths[0], game_dir / "arena", executor, progress=not quiet, yes=yes,
                       agent=selection.spec)
    syntheses = synthesis_rows(seeds, paths, selection, found)
    return [r | {"syntheses": syntheses} for r in rows], found, {"syntheses": [
        {"seed": seed} | figure_report.provenance(path) for seed, path in zip(seeds, paths)]}


def synthesis_rows(seeds: Sequence[int], paths: Sequence[Path], selection: Any, results: Sequence[Any]
                   ) -> list[dict[str, Any]]:
    """Per synthesis: its seed, its selection score and whether it survived, and against each opponent the
    matches the CWM agent drew it for, with its wins, draws and losses there (the spread across syntheses)."""
    by_path = {str(Path(p).resolve()): seed for seed, p in zip(seeds, paths)}
    scores = {str(Path(sc.candidate.path).resolve()): sc for sc in selection.scores}
    tally: dict[tuple[int, str], list[int]] = {}
    for r in results:
        if r.void or SELECTED_LABEL not in r.seats:
            continue
        seat = r.seats.index(SELECTED_LABEL)
        picked = (r.stats[seat] if r.stats else {}).get("selected_path")
        seed = by_path.get(str(Path(picked).resolve())) if isinstance(picked, str) else None
        if seed is None:
            continue
        opponent = "+".join(a for i, a in enumerate(r.seats) if i != seat)
        mine, best_other = r.returns[seat], max(v for i, v in enumerate(r.returns) if i != seat)
        counts = tally.setdefault((seed, opponent), [0, 0, 0])
        counts[0 if mine > best_other else 2 if mine < best_other else 1] += 1
    rows = []
    for seed, path in zip(seeds, paths):
        score = scores.get(str(Path(path).resolve()))
        rows.append({"seed": seed, "bundle": str(path), "survived": bool(score and score.survived),
                     "selection_mean": None if score is None else _finite(score.mean),
                     "matches": {opp: {"wins": w, "draws": d, "losses": lo}
                                 for (s, opp), (w, d, lo) in sorted(tally.items()) if s == seed}})
    return rows


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _write(out: Path, figure: ArenaFigureConfig, argv: list[str], rows: list[dict[str, Any]],
           bundles: dict[str, dict[str, Any]], board: list[dict[str, Any]], started: _dt.datetime) -> None:
    from cwm.agents.specs import Settings

    (out / "arena.md").write_text(figure_report.markdown(rows, board) + figure_report.provenance_notes(bundles)
                                  + figure_report.syntheses_markdown(rows), encoding="utf-8")
    common.write_json(out / "arena.json", {"rows": rows, "bundles": bundles, "leaderboard": board})
    common.write_csv(out / "arena.csv", rows)
    if any(not r.get("status") for r in rows):
        figure_report.plot(rows, out / "arena.png")
    direct = None if figure.direct_llm is None else {
        "spec": figure.direct_llm, "llm_retries": Settings().llm_retries, "llm_examples": Settings().llm_examples}
    from cwm.synthesis import RequestSettings, TreeSettings

    llm = {"synthesis": {g: b.get("answered_by") or b.get("llm") for g, b in bundles.items()}, "synthesis_spec": figure.llm,
           "synthesis_request": dataclasses.asdict(RequestSettings()),
           "synthesis_tree": dataclasses.asdict(TreeSettings()), "direct_policy": direct}
    hashes: dict[str, Any] = {f"synthesis:{g}": b.get("prompt_hashes") for g, b in bundles.items()}
    if figure.direct_llm:
        hashes["direct_policy"] = common.policy_prompt_hashes()
    common.write_record(out, experiment=EXPERIMENT, config=figure, argv=argv, llm=llm, prompt_hashes=hashes,
                        seeds={c.game: [figure.seed] for c in figure.games},
                        results={"rows": rows, "bundles": bundles, "leaderboard": board,
                                 "arena_cost": figure_report.costs(out, [c.game for c in figure.games])},
                        started=started)


if __name__ == "__main__":
    sys.exit(main())
