"""The main job: collect trajectories -> synthesize a world model (and, for a hidden-information game, its
inference function) -> export a bundle -> a fast twin and PPO on a JAX twin (from shipped sessions) -> arena -> on-policy accuracy (and, for a hidden-information game,
the posterior check off- and on-policy) -> report.

Every stage writes into one run directory and is skipped when its output is already there, so an
interrupted ``cwm run`` resumes where it stopped (the synthesis and arena stages also resume inside
themselves: no LLM call is repeated and no finished match is replayed).

Run directory::

    .cwm-lock            held by the process running in the directory (a second one is refused: cwm.arena.lock)
    config.json          the run's settings (once a run has started, other settings are refused)
    synthesis/           the synthesis run (prompts, replies, programs, check reports, result.json, plot, and
                         provenance.json: who answered and how the texts travelled, cwm.llm.provenance)
    inference/           hidden information only: the open-deck inference synthesis for the best world model
    bundle/              the exported bundle of the best program (and its inference function); the twin stages
                         add twin.py (fast twin), encoder.py, jax_twin.py and policy.npz (PPO) with their evidence
    twin/, twin.json     the fast-twin stage (cwm.pipeline.twins): its synthesis run, and its record (accepted,
                         or skipped and why; the projected and measured CPU)
    ppo/, ppo.json       the PPO stage (cwm.pipeline.ppo_stage): the encoder and JAX-twin replays (ppo/bundle is
                         the bundle they were asked from), the training's checkpoints, and its record
    arena/               matches.jsonl, labels.json and the arena summaries (JSON, CSV, markdown, plot)
    on_policy.json       the bundle checked on the games its agent played in the arena
    posterior.json       hidden information only: the inference's posterior check, off-policy and on the arena
                         states its agent met (cwm.pipeline.beliefs)
    report.md, report.json, record.json (config, LLM and its settings, prompt hashes, seed, git commit, results)

Nothing a resume compares or keys matches by holds a machine path: the CWM agent plays as ``cwm``
(``cwm=cwm:ABSOLUTE/bundle`` for the workers; a match's key holds the hash of the bundle's files' hashes,
not its place nor its export time), and ``config.json`` names a recording shipped with cwm by its place in the package. So a run
directory moved or copied elsewhere (another machine too) resumes under the same command with the new
``--out``, replaying no match and repeating no call. Records that are not compared do hold paths:
``llm`` in ``report.json``/``record.json`` (a recording's full path), ``run_dir`` in
``bundle/manifest.json`` and ``synthesis/result.json``; a ``--rules`` file is compared as typed.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyspiel

from cwm import arena, bundle, games
from cwm.agents.specs import Settings, parse_agent_spec
from cwm.arena import compare, cost, teams
from cwm.arena import report as arena_report
from cwm.arena.lock import refuse_if_locked, writer_lock
from cwm.arena.plan import MAX_MATCHES
from cwm.arena.run import check_agents
from cwm.bundle.files import CODE_FILES, FILE_LIMITS
from cwm.files import RUN_FILE_BYTES, atomic_write, differing_keys, loads_bounded, read_bounded, read_text
from cwm.llm import (
    PROVENANCE_FILE,
    client_provenance,
    make_client,
    read_provenance,
    refuse_long_text,
    write_provenance,
)
from cwm.pipeline import beliefs
from cwm.pipeline import report as pipeline_report
from cwm.pipeline.on_policy import on_policy_accuracy
from cwm.pipeline.ppo_stage import PPO_LABEL, PPO_STEPS, ppo_stage
from cwm.pipeline.recordings import (  # noqa: F401  (re-exported)
    API_KEY_VARS,
    PipelineError,
    recording_for,
    recording_provenance,
    resolve_llm,
)
from cwm.pipeline.twins import TWINS, StageInput, fast_stage, planned_on
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from cwm.synthesis.inference import synthesize_inference
from cwm.synthesis.progress import progress_bar
from cwm.types import JSON
from planners.config import SearchConfig
from planners.gt_sampler import resampler_problem, resampler_self_test
from planners.worlds import world_sampler


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Settings of one main-job run (all written into ``config.json`` and ``record.json``).

    Attributes:
      game: registry name, OpenSpiel game string, or ``path/to/module.py:short_name``.
      llm: an LLM spec for ``cwm.llm.make_client``, or ``"auto"``: Gemini when an API key is set, else the
        recorded session shipped in the package for this game.
      strategy: synthesis refinement strategy, ``"tree"`` or ``"conversation"``.
      budget: LLM-call budget of the synthesis (paper: 500), and again of the inference synthesis.
      seed: seeds the trajectories, the search and the arena.
      num_test: held-out test games for the world model's test accuracy (half random, half MCTS play), or
        ``None`` (the default): a held-out set sized by transitions, the paper's 10,000, generated once and
        cached (``cwm.synthesis.held_out``). The inference synthesis tests on ``num_test`` random games
        (100 when ``None``).
      matches: arena games per pairing and seat order.
      simulations: MCTS simulations per move in the arena (paper: 1000).
      rollouts: random rollouts per MCTS leaf (paper: 10).
      opponents: agent specs the CWM agent plays against (default: random play and the ground-truth planner,
        ``gt-mcts`` for perfect information, ``gt-ismcts`` for hidden information).
      executor: where arena matches run (``local``, ``local:N``, ``inline``, ``ray[:ADDRESS]``).
      rules: the rules in the prompts: ``"spec"`` (default), ``"prose"`` (the rulebook tier) or a rules file
        (needed for games outside the registry); ``cwm.games.with_rules``.
      move_time_limit: CPU seconds per arena move (``cwm.arena.DEFAULT_MOVE_TIME_S``).
      trust: plan on the synthesized model in the arena's own processes instead of in hardened workers
        (only for a model you have read).
      max_rollout_steps: the arena planners' rollout cut-off in moves (``SearchConfig.max_rollout_steps``);
        ``None`` (the default) is replaced by the game's own (``GameSpec.rollout_cutoff``: 10 for Hanabi,
        whose random playouts to the end are all worth 0; none for most games), so the recorded config
        always says which cut-off the arena used (``None`` there: rollouts play to the end); ``0`` asks for
        none (rollouts play to the end, even in a game that has a cut-off of its own).
      twins: the fast-twin stage (``cwm.pipeline.twins``): ``"auto"`` replays the game's shipped fast-twin
        session when its equivalence check is projected within ``AUTO_CHECK_CPU_S``; ``"on"`` runs it at any
        cost (and, with a live LLM, has that LLM write the twin); ``"off"`` never. The arena's CWM agent plans
        on an accepted twin.
      ppo_steps: the PPO stage's environment steps on the JAX twin of the game's shipped PPO session
        (``cwm.pipeline.ppo_stage``; the policy plays in the arena as ``ppo``); ``0`` turns the stage off.
    """

    game: str
    llm: str = "auto"
    strategy: str = "tree"
    budget: int = 500
    seed: int = 0
    num_test: int | None = None
    matches: int = 10
    simulations: int = 200
    rollouts: int = 4
    opponents: tuple[str, ...] | None = None
    executor: str = "local"
    rules: str | None = None
    move_time_limit: float = 60.0
    trust: bool = False
    max_rollout_steps: int | None = None
    twins: str = "auto"
    ppo_steps: int = PPO_STEPS

    def __post_init__(self) -> None:
        if self.opponents is None:
            object.__setattr__(self, "opponents", default_opponents(self.game))
        if self.max_rollout_steps is None:
            object.__setattr__(self, "max_rollout_steps", default_rollout_cutoff(self.game))
        cutoff = 1 if not self.max_rollout_steps else self.max_rollout_steps  # None and 0: no cut-off
        positive = {"budget": self.budget, "matches": self.matches, "simulations": self.simulations,
                    "rollouts": self.rollouts, "max_rollout_steps": cutoff}
        bad = [f"{k} must be at least 1 (got {v})" for k, v in positive.items() if v < 1]
        if self.twins not in TWINS:
            bad.append(f"twins must be one of {', '.join(TWINS)} (got {self.twins!r})")
        if type(self.ppo_steps) is not int or self.ppo_steps < 0:
            bad.append(f"ppo_steps must be 0 (no PPO stage) or more (got {self.ppo_steps!r})")
        if self.num_test is not None and self.num_test < 0:
            bad.append(f"num_test must be 0 or more (got {self.num_test})")
        planned = 2 * self.matches * len(self.opponents or ())
        if planned > MAX_MATCHES:
            bad.append(f"{self.matches:,} matches per seat against {len(self.opponents or ())} opponents is "
                       f"{planned:,} arena matches, over the {MAX_MATCHES:,} a tournament may play")
        if self.strategy not in ("tree", "conversation"):
            bad.append(f"strategy must be 'tree' or 'conversation' (got {self.strategy!r})")
        if not (type(self.move_time_limit) in (int, float) and self.move_time_limit > 0):
            bad.append(f"the move time limit must be > 0 seconds (got {self.move_time_limit!r})")
        if self.rules is not None and self.rules not in games.RULES_TIERS:
            try:
                games.check_rules_file(Path(self.rules))
            except games.UnknownGameError as e:
                bad.append(str(e))
        if bad:
            raise PipelineError("; ".join(bad))


INFERENCE_TEST_GAMES = 100  # random games whose players' views test the inference function, by default


def default_opponents(game: str) -> tuple[str, ...]:
    """Random play and the ground-truth planner of the game's kind (an unknown game is refused later); random
    play alone where the ground-truth ISMCTS cannot search the game (``gt_search_problem``: a user's game whose
    deals the generic resampler cannot draw)."""
    try:
        spec = games.resolve(game)
        perfect = spec.perfect_information
        searchable = perfect or not gt_search_problem(games.load_game(spec))
    except Exception:  # noqa: BLE001  run() names the problem with the game before anything is written
        perfect = searchable = True
    return ("random", "gt-mcts" if perfect else "gt-ismcts") if searchable else ("random",)


def default_rollout_cutoff(game: str) -> int | None:
    """The game's rollout cut-off for ``cwm run``'s arena (``GameSpec.rollout_cutoff``; ``None`` for a game
    without one, and for one that does not resolve, which ``run()`` names later)."""
    try:
        return games.resolve(game).rollout_cutoff
    except Exception:  # noqa: BLE001  run() names the problem with the game before anything is written
        return None


def gt_search_problem(game: pyspiel.Game) -> str:
    """Why no ground-truth resampler serves ISMCTS in ``game``, ``""`` when one does: a problem read from the
    game's type, else the sampler's seeded self-test (the check ``gt-ismcts`` itself makes before it plays)."""
    return resampler_problem(game) or resampler_self_test(game)


def posterior_problem(game: pyspiel.Game) -> str:
    """Why no true posterior can be computed in ``game`` to check an inference function by, ``""`` when one
    can: no ground-truth resampler (``gt_search_problem``), or one written for the game (``planners.worlds``),
    whose draws are uniform over the deals consistent with the player's observations, while the check's true
    posterior weights them by uniformly random opponents (``cwm.checks.posterior.OPPONENT_MODEL``), whose
    number of legal moves depends on the hidden cards."""
    problem = gt_search_problem(game)
    if problem or world_sampler(game) is None:
        return problem
    return (f"the ground truth's world sampler for {game.get_type().short_name} draws uniformly over the deals "
            f"consistent with the player's observations, not weighted by the uniformly random opponents the "
            f"posterior check assumes (their number of legal moves depends on the hidden cards), and the "
            f"generic resampler cannot enumerate these deals")


def run(config: RunConfig, out: str | Path, *, progress: bool = True,
        max_prompt_tokens: int | None = None, yes: bool = False) -> dict[str, JSON]:
    """Runs (or resumes) the main job and returns the report (also written to ``out/report.json``).

    Args:
      max_prompt_tokens: the synthesis client's prompt cap (``cwm.llm.make_client``; default the model's
        context window). A limit on spending, not a setting of the run: a resume may change it.
      yes: start the arena stage even when its cost estimate (``cwm.arena.cost``, printed once the bundle exists)
        is over the threshold.

    Raises:
      PipelineError: ``out`` holds a run with other settings, ``max_prompt_tokens`` is below 1, or
        synthesis found no usable program.
      PromptTooLongError: a synthesis prompt is over the cap (nothing was sent).
      UsageError: the arena stage is projected over the threshold without ``yes`` (from a terminal or a
        script; the synthesis and bundle stay, and rerunning with ``yes`` resumes at the arena).
      DirectoryInUse: another process is running in ``out`` (``cwm.arena.lock``; its pid in the message).
    """

    out = Path(out)
    if max_prompt_tokens is not None and max_prompt_tokens < 1:
        raise PipelineError(f"max_prompt_tokens must be at least 1 (got {max_prompt_tokens})")
    # an unknown game, or one without rules, fails here, before an LLM is configured or anything is written;
    # the game is resolved once, here, and passed down
    spec = games.resolve(config.game, rules=config.rules)
    games.rules_text(spec)
    # so are opponents that cannot play it (a typo in a spec, a wrong cwm: path), not after the synthesis
    check_agents(spec.name, {parse_agent_spec(o).label: o for o in config.opponents or ()},
                 Settings(search=arena_search(config), trust_models=config.trust))
    what = f"the rules of {spec.name} ({spec.rules})"
    if max_prompt_tokens is not None:  # rules too long for the limit asked are refused before an LLM is sought
        refuse_long_text(games.rules_text(spec), max_prompt_tokens, what=what)
    llm_spec = resolve_llm(config.llm, config.game, config.rules)
    # a missing key or recording fails here too, not after config.json is written; so do rules too long to send
    limit = make_client(llm_spec, max_prompt_tokens=max_prompt_tokens).max_prompt_tokens
    refuse_long_text(games.rules_text(spec), limit, what=what)
    refuse_if_locked(out)
    with writer_lock(out):  # one writer per run directory: a second would repeat calls and matches
        config = _check_config(out, config, _portable(llm_spec))
        client = functools.partial(make_client, llm_spec, max_prompt_tokens=max_prompt_tokens)
        return _stages(config, spec, llm_spec, client, out, (progress, yes))


def _stages(config: RunConfig, spec: games.GameSpec, llm_spec: str, client: Callable[..., Any], out: Path,
            asked: tuple[bool, bool]) -> dict[str, JSON]:
    """Every stage of ``run`` in turn, each skipped when its output is there; the report, written."""
    progress = asked[0]
    synthesis = _synthesize(config, spec, client, out / "synthesis", progress)
    inference = None
    if not spec.perfect_information:
        inference = _infer(config, spec, client, out / "inference", str(synthesis["best_source"]), progress)
    bundle_dir = _export(out / "synthesis", out / "bundle", out / "inference" if inference else None)
    stage = StageInput(spec=spec, bundle_dir=bundle_dir, out=out, llm_spec=llm_spec, config=config, progress=progress)
    twin, ppo = fast_stage(stage), ppo_stage(stage)
    arena_rows, results, arena_cost = _arena(config, spec, bundle_dir, out / "arena", asked,
                                             ppo=ppo.get("status") == "trained")
    on_policy = _on_policy(spec, bundle_dir, results, out / "on_policy.json")
    posterior = None
    if (bundle_dir / "inference.py").is_file():
        unknowable = posterior_problem(games.load_game(spec))  # no true posterior to compare with (Hanabi)
        posterior = ({"skipped": f"the ground truth's true posterior cannot be computed ({unknowable})"}
                     if unknowable else _posterior(spec, bundle_dir, results, out / "posterior.json", config.seed))
    compared, agents = _arena_findings(config, spec, results, ppo=ppo.get("status") == "trained")
    stages = pipeline_report.Stages(
        synthesis=synthesis, inference=inference, bundle_dir=Path(os.path.relpath(bundle_dir, out)),
        arena_rows=arena_rows, on_policy=on_policy, search=arena_search(config).to_json(), label=CWM_LABEL,
        posterior=posterior, provenance=read_provenance(out / "synthesis" / PROVENANCE_FILE).to_json(),
        comparisons=compared, agents=agents)
    report = pipeline_report.build(config, spec, llm_spec, stages)
    report["arena_cost"] = arena_cost
    report["twins"] = {"planned_on": planned_on(bundle_dir), "fast": twin, "ppo": ppo}
    pipeline_report.write(out, report, spec)
    return report


def _portable(llm_spec: str) -> str:
    """An LLM spec as ``config.json`` records it: a recording shipped with cwm is named by its place in the
    package (``replay:<cwm>/data/recordings/tic_tac_toe.jsonl``), not by where cwm is installed, so a run
    directory moved to another machine (or written by an older cwm, which recorded the full path) resumes."""
    kind, _, target = llm_spec.partition(":")
    path = Path(target)
    if kind == "replay" and path.parent.parts[-3:] == ("cwm", "data", "recordings"):
        return f"replay:<cwm>/data/recordings/{path.name}"
    if kind == "replay" and path.parent.parts[-4:] == ("cwm", "data", "recordings", "real"):
        return f"replay:<cwm>/data/recordings/real/{path.name}"
    return llm_spec


# Settings a resumed run may change: more arena matches per pairing extend the arena, as `cwm arena` does
# (the matches already played keep their keys and seeds; only the new ones are played).
EXTENDABLE = frozenset({"matches"})


def _check_config(out: Path, config: RunConfig, llm_resolved: str) -> RunConfig:
    """Writes the run's settings to ``out/config.json``, where a run that did work must have the same ones (or
    more matches); the settings to run with (an older run's own cut-off: ``_older_run``)."""
    path = out / "config.json"
    record = dataclasses.asdict(config) | {"llm_resolved": llm_resolved}
    if path.is_file() and (out / "synthesis").exists():  # a run that did work: only the same settings resume
        old = json.loads(read_text(path, what="run settings"))  # its size checked first
        old["llm_resolved"] = _portable(str(old.get("llm_resolved", "")))  # older runs: a recording's full path
        if "max_rollout_steps" not in old:
            config = _older_run(old, config, path)
            record = {k: v for k, v in record.items() if k != "max_rollout_steps"}  # it resumes so again
        if "twins" not in old:
            config = _before_twins(old, config, path)
            record = {k: v for k, v in record.items() if k not in ("twins", "ppo_steps")}  # it resumes so again
        changed = differing_keys(old, dataclasses.asdict(config) | {"llm_resolved": llm_resolved}, ignore=EXTENDABLE)
        if changed:
            raise PipelineError(f"{out} holds a run with other settings ({', '.join(changed)} differ); "
                                f"use the same settings to resume, or another --out")
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return config


def _older_run(old: dict[str, Any], config: RunConfig, path: Path) -> RunConfig:
    """A run whose ``config.json`` records no rollout cut-off (``old``) was started before ``cwm run`` had one:
    its rollouts played to the end. Asked for none (``0``, or ``None`` in a game without a cut-off) or for the
    game's default cut-off, it resumes with its own setting, none (and says so on stderr for the default);
    asked for another cut-off, its settings differ."""
    asked, default = config.max_rollout_steps, default_rollout_cutoff(config.game)
    old["max_rollout_steps"] = None if asked is None else 0  # no cut-off, as the new settings write none
    if asked and asked == default:
        print(f"note: {path} records no rollout cut-off (its run was started before {config.game} had one): it "
              f"resumes with its own setting, rollouts played to the end, not cut off after {default} moves",
              file=sys.stderr)
        return dataclasses.replace(config, max_rollout_steps=0)
    return config


def _before_twins(old: dict[str, Any], config: RunConfig, path: Path) -> RunConfig:
    """A run whose ``config.json`` records no twin settings (``old``) was started before ``cwm run`` had its twin
    stages: its bundle and arena have none. Asked for the defaults or for no stages, it resumes without them
    (and says so on stderr for the defaults: adding a twin would change the bundle its matches were played
    with); asked for other settings, its settings differ."""
    default = dataclasses.replace(config, twins="auto", ppo_steps=PPO_STEPS)
    old["twins"], old["ppo_steps"] = "off", 0
    if config == default or (config.twins, config.ppo_steps) == ("off", 0):
        if config == default:
            print(f"note: {path} records no twin settings (its run was started before cwm run had twin stages): "
                  f"it resumes without them", file=sys.stderr)
        return dataclasses.replace(config, twins="off", ppo_steps=0)
    return config


def stage_settings(config: RunConfig, target: str) -> SynthesisSettings:
    """The synthesis settings of the run's world-model or inference stage: the run's strategy, budget and seed
    (both stages spend up to ``budget`` calls) and its held-out games."""
    num_test = config.num_test if target == "world_model" or config.num_test is not None else INFERENCE_TEST_GAMES
    return SynthesisSettings.of(target, strategy=config.strategy, budget=config.budget, seed=config.seed,
                                num_test=num_test)


def _synthesize(config: RunConfig, spec: games.GameSpec, client: Callable[..., Any], run_dir: Path,
                progress: bool) -> dict[str, JSON]:
    """The world-model synthesis stage (``client(run_dir=...)`` makes its LLM client)."""
    rules = games.rules_text(spec) if config.rules else None  # spec carries the rules --rules named
    llm = client(run_dir=run_dir)
    result = _with_bar(config.budget, progress, lambda update: synthesize_world_model(
        spec, llm, stage_settings(config, "world_model"), run_dir=run_dir, rules=rules, progress=update))
    write_provenance(run_dir / PROVENANCE_FILE, client_provenance(llm))  # who answered: into the bundle and report
    if not result.best_source:
        raise PipelineError(f"synthesis produced no usable program (see {run_dir}/summary.md)")
    return result.to_json()


def _infer(config: RunConfig, spec: games.GameSpec, client: Callable[..., Any], run_dir: Path, world_model: str,
           progress: bool) -> dict[str, JSON]:
    """The open-deck inference synthesis for the best world model (same LLM, budget, seed and test games)."""
    rules = games.rules_text(spec) if config.rules else None  # spec carries the rules --rules named
    llm = client(run_dir=run_dir)
    result = _with_bar(config.budget, progress, lambda update: synthesize_inference(
        spec, llm, stage_settings(config, "inference"), run_dir=run_dir, world_model=world_model, rules=rules,
        progress=update))
    write_provenance(run_dir / PROVENANCE_FILE, client_provenance(llm))
    if not result.best_source:
        raise PipelineError(f"inference synthesis produced no usable program (see {run_dir}/summary.md)")
    return result.to_json()


def _with_bar(budget: int, show: bool, run: Any) -> Any:
    """``run(progress)`` with a progress bar over ``budget`` calls (closed when it returns or raises) when
    ``show``, else with no progress callback."""
    bar = progress_bar(budget) if show else None
    try:
        return run(None if bar is None else bar.update_from)
    finally:
        if bar is not None:
            bar.close()


def _export(run_dir: Path, bundle_dir: Path, inference_dir: Path | None) -> Path:
    """The bundle of the best program (and inference function); an earlier export of the same code stands."""
    wanted = {"model.py": run_dir, "inference.py": inference_dir}
    if (bundle_dir / "manifest.json").is_file() and all(
            _same_code(bundle_dir / name, source) for name, source in wanted.items()):
        return bundle_dir
    return bundle.export_run(run_dir, bundle_dir, overwrite=True, inference_run=inference_dir)


def _same_code(file: Path, run_dir: Path | None) -> bool:
    if run_dir is None:
        return not file.exists()
    result = json.loads(read_text(run_dir / "result.json", what="run result"))  # sizes checked first
    return file.is_file() and read_text(file, what="model file") == result["best_source"]


CWM_LABEL = "cwm"  # the CWM agent's name in the arena and the report: the same wherever the run directory is


def _arena(config: RunConfig, spec: games.GameSpec, bundle_dir: Path, out: Path, asked: tuple[bool, bool], *,
           ppo: bool = False) -> tuple[list[dict[str, JSON]], list[Any], dict[str, JSON]]:
    """The run's bundle, labelled ``cwm``, against each opponent; its summary rows and the match records.
    Matches are found by content (``cwm.arena.identity``), so those of this bundle count wherever the run
    directory was, and nothing is replayed. The stage's cost estimate is printed (and confirmed, ``cwm.arena.cost.confirm``) first and returned beside
    its real wall time. ``asked``: (show progress, start even when the estimate is long). ``ppo``: the bundle
    holds the PPO stage's policy, which plays each opponent too, labelled ``ppo``.
    """
    progress, yes = asked
    settings = Settings(search=arena_search(config), trust_models=config.trust)
    opponents = tuple(config.opponents or ())
    agents = [f"{CWM_LABEL}=cwm:{bundle_dir.resolve()}", *opponents]
    # with N players, the CWM agent against N - 1 copies of one opponent, in the table's rotations; in a
    # cooperative game the teams: the CWM agent's own, it with N - 1 copies of each other agent, and theirs
    pairings = [(CWM_LABEL,) + (o,) * (spec.players - 1) for o in opponents]
    team_game = teams.cooperative(spec)
    if team_game:
        pairings = [(CWM_LABEL,) * spec.players, *pairings, *((o,) * spec.players for o in opponents)]
    elif ppo:
        agents.append(f"{PPO_LABEL}=ppo:{bundle_dir.resolve()}")
        pairings += [(PPO_LABEL,) + (o,) * (spec.players - 1) for o in opponents]
    plan = arena.TournamentPlan(matches=config.matches, settings=settings, seed=config.seed,
                                move_time_limit=config.move_time_limit, pairings=pairings)
    estimate = cost.estimate_tournament(spec, agents, plan, executor=config.executor, out_dir=out)
    cost.confirm(estimate, yes=yes)
    start = time.perf_counter()
    with cost.cpu_meter() as used:
        results = arena.tournament(spec, agents, plan, out_dir=out, executor=config.executor, progress=progress)
    if team_game:
        gt = games.load_game(spec)
        rows = teams.team_rows(results, max_score=float(gt.max_utility()), min_score=float(gt.min_utility()))
    else:
        rows = [row for row in arena_report.summarize(results) if row["agent"] in (CWM_LABEL, PPO_LABEL)]
    return rows, results, cost.record(estimate, time.perf_counter() - start, used.cpu_s())


def _arena_findings(config: RunConfig, spec: games.GameSpec, results: list[Any], *,
                    ppo: bool = False) -> tuple[list[dict[str, JSON]], dict[str, str]]:
    """The CWM agent's paired comparisons with each opponent (in a cooperative game, every two teams on their
    shared deals, ``cwm.arena.teams``), and what each agent of the arena was."""
    if teams.cooperative(spec):
        compared = [{k: arena_report.finite_json(v) for k, v in c.items()} for c in teams.team_comparisons(results)]
    else:
        compared = [r for r in arena_report.paired_comparisons(spec, results)
                    if {CWM_LABEL, PPO_LABEL} & {r["agent"], r["opponent"]}]
    specs = {CWM_LABEL: "cwm:bundle"} | ({PPO_LABEL: "ppo:bundle"} if ppo else {}) | {
        parse_agent_spec(o).label: o for o in config.opponents or ()}
    settings = dataclasses.asdict(Settings(search=arena_search(config), trust_models=config.trust))
    return compared, compare.describe_agents(specs, settings, perfect=spec.perfect_information)


def _on_policy(spec: games.GameSpec, bundle_dir: Path, results: list[Any], out: Path) -> dict[str, JSON]:
    """The bundle checked (in the sandbox) on the arena games its agent finished; saved to ``out``."""
    sources = {name: read_text(bundle_dir / name, what="bundle file", limit=FILE_LIMITS[name]) for name in CODE_FILES
               if (bundle_dir / name).is_file()}
    record = on_policy_accuracy(sources, spec, results, CWM_LABEL)
    out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def _posterior(spec: games.GameSpec, bundle_dir: Path, results: list[Any], out: Path, seed: int) -> dict[str, JSON]:
    """The posterior check of the bundle's inference, off-policy and on the arena states its agent met (each
    draw in a hardened worker); saved to ``out``, and taken from there when it checked as many matches at the
    same size (a resumed run whose arena did not grow)."""
    settings = beliefs.run_settings(seed)
    if out.is_file():
        try:  # a truncated or damaged file is checked again, not a dead end for every resume
            old = loads_bounded(read_bounded(out, RUN_FILE_BYTES, what="posterior check"), where=str(out),
                                allow_nan=True)
        except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, InputLimitError
            old = None
        finished = len(beliefs.agent_states(spec, results, CWM_LABEL)[1])
        if beliefs.well_formed(old) and old.get("settings") == json.loads(json.dumps(dataclasses.asdict(settings))) \
                and old.get("matches") == finished:
            return old
    inference = read_text(bundle_dir / "inference.py", what="bundle file", limit=FILE_LIMITS["inference.py"])
    record = beliefs.posterior_record(inference, spec, results, CWM_LABEL, settings)
    atomic_write(out, json.dumps(record, indent=2) + "\n")
    return record


def arena_search(config: RunConfig) -> Any:
    """The ``planners.SearchConfig`` of the run's arena agents."""

    return SearchConfig(num_simulations=config.simulations, rollouts=config.rollouts,
                        max_rollout_steps=config.max_rollout_steps or None)  # 0: no cut-off

