"""A cooperative game's teams on shared deals: a direct-LLM team recorded through the batch relay, shipped, and
replayed offline beside the random team, the CWM agent's team, a mixed CWM + random team and the ground-truth
planner's team (Hanabi's team figure, beside the published reference points).

Recording (not this script): the direct LLM plays with itself through a batch directory named ``batch``, the
answers read in by ``cwm.llm.batch_texts.import_answers`` between rounds (each answer with the ``<key>.sha256``
the relay wrote from the text it gave the answering model)::

    cwm arena hanabi --agents direct-llm=llm:batch:WORK/batch --self-play --matches 3 --sims 200 --rollouts 4 \\
        --seed 0 --out WORK/arena --yes --no-progress
    cwm llm pending WORK/batch --export WORK/prompts

Shipping (``--work WORK --ship``): once no request waits, the batch directory's requests and replies are copied
into ``cwm/data/recordings/teams/<game>/`` with ``provenance.json``: who answered, the relay, the date, how many
replies carry a prompt hash matching their request's text, the arena's settings (``WORK/arena/config.json``) and
the recorded deals (each match's index, deal seed, score, moves and a hash of its actions).

Replay (no ``--work``): the shipped team is played again under exactly the recorded settings, so match ``i`` of
every team is dealt the recorded deal ``i`` (``cwm.arena.plan.deal_seed``: the seed, the game, the settings'
hash and the index), and every request of the direct LLM is answered from the shipped replies (a request
without one is refused in one line: a replay asks no model). The direct-LLM team's replayed deals must equal
the recorded ones, score and actions. On the same deals it plays the random team, the CWM agent's team (its
bundle synthesized from the game's shipped real session, as ``experiments/arena_figure.py`` does, or
``--bundles GAME=PATH``), CWM + random, and the ground-truth planner's team where that planner can play the
game (else a line says why). A mixed CWM + direct-LLM team is not replayable from such a recording (the direct
LLM's prompts would show another partner's moves, which nobody answered) and a line says so. Printed: the team
table (``cwm.arena.teams``) with the reference points, the paired comparisons on shared deals, the direct LLM's
illegal answers per move asked, forfeits per match, calls and tokens.

With ``--planner-max-rollout-steps K`` the planner teams (CWM, CWM + random, ground truth) also play under the
recorded settings with a rollout cut-off of K moves (``SearchConfig.max_rollout_steps``), on the recorded deals
given by their seeds (``TournamentPlan.deals``: the cut-off is in the settings, so these matches would
otherwise be dealt other cards), in ``arena-cutK/``; their agents are labelled ``-cutK`` (``cwm-cut10``), so
each is its own row of the table and is compared with the direct-LLM team on the shared deals.

    python experiments/team_figure.py --games hanabi --work /path/to/work --ship --fresh-instances   # ship
    python experiments/team_figure.py --games hanabi --out runs/hanabi-teams --num-test 0 --yes      # replay
    python experiments/team_figure.py --games hanabi --out runs/hanabi-teams --num-test 0 --yes \
        --planner-max-rollout-steps 10                                                                # + cut-off rows
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import hashlib
import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository root importable for `experiments`
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from cwm.llm.provenance import RELAY_BY
from experiments import arena_figure, common, imperfect

EXPERIMENT = "team_figure"
GAMES = ("hanabi",)
SHIPPED = Path(__file__).resolve().parent.parent / "cwm" / "data" / "recordings" / "teams"
LLM_LABEL = "direct-llm"
RANDOM_LABEL = "random"
BATCH_FILES = ("pending.jsonl", "replies.jsonl")
PROVENANCE = "provenance.json"
NOT_REPLAYABLE = ("not replayable from this recording: the direct LLM's prompts would show its CWM partner's "
                  "moves, and the recording answered only prompts of the direct-LLM team")


@dataclasses.dataclass(frozen=True)
class TeamFigureConfig:
    """What decides a replay (``config.json`` and ``record.json``): the games, the LLM that synthesizes the
    CWM agent's bundle (``auto``: the game's shipped session), bundles given, the folder of shipped team
    sessions, the synthesis seed, the LLM cache, the executor, the run directory and the planner teams'
    rollout cut-off (``None``: no cut-off rows). The arena's seed and settings are not here: they are the
    recording's."""

    games: tuple[common.GameConfig, ...]
    llm: str
    bundles: tuple[tuple[str, str], ...]
    sessions: str
    seed: int
    cache: str | None
    executor: str
    out: str
    planner_max_rollout_steps: int | None = None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=EXPERIMENT, description=__doc__.splitlines()[0])
    common.add_common_args(p, default_executor="local")
    p.add_argument("--work", default=None, metavar="DIR",
                   help="with --ship: the recording's folder (DIR/batch, the relay's batch directory; DIR/arena, "
                        "its `cwm arena` run)")
    p.add_argument("--ship", action="store_true", help="copy the finished recording in --work into the sessions "
                   "folder (cwm/data/recordings/teams/<game>/)")
    p.add_argument("--relay-by", choices=RELAY_BY, default="agent",
                   help="with --ship: who carried each prompt to the answering model and its reply back")
    p.add_argument("--fresh-instances", action="store_true",
                   help="with --ship: every reply came from a fresh instance of the answering model that saw only "
                        "its one prompt (the provenance says so)")
    p.add_argument("--sessions", default=str(SHIPPED), metavar="DIR",
                   help="the folder of shipped team sessions: replayed, and where --ship copies one (default: "
                        "cwm's, cwm/data/recordings/teams/)")
    p.add_argument("--bundles", action="append", default=[], metavar="GAME=PATH",
                   help="the CWM agent's bundle for GAME instead of one synthesized here (e.g. `cwm run`'s)")
    p.add_argument("--planner-max-rollout-steps", type=int, default=None, metavar="K",
                   help="also play the planner teams (cwm, cwm+random, the ground-truth planner) with a rollout "
                        "cut-off of K moves on the recorded deals, as rows of their own (labelled -cutK)")
    p.add_argument("--yes", action="store_true", help="replay even when the projected wall time is over the "
                   "threshold (the estimate is always printed)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return common.script_main(parser(), _run, EXPERIMENT, argv)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    from cwm.arena import teams

    configs = common.game_configs(args, GAMES)
    solo = [c.game for c in configs if not teams.cooperative(c.game)]
    if solo:
        raise common.ExperimentError(f"{', '.join(solo)}: not cooperative (its seats do not share one score), so it "
                                     f"has no teams; team_figure plays games such as hanabi and tiny_hanabi")
    if args.ship:
        if not args.work:
            raise common.ExperimentError("--ship copies a recorded team session: name its folder with --work DIR")
        if len(configs) != 1:
            raise common.ExperimentError("--ship copies one game's recording: name one game with --games")
        ship(configs[0].game, Path(args.work), Path(args.sessions), relay_by=args.relay_by,
             fresh=args.fresh_instances)
        return 0
    if args.work:
        raise common.ExperimentError("--work names a recording to ship: add --ship (a replay reads --sessions)")
    if args.planner_max_rollout_steps is not None and args.planner_max_rollout_steps < 1:
        raise common.ExperimentError(f"--planner-max-rollout-steps {args.planner_max_rollout_steps}: a rollout "
                                     f"cut-off is a number of moves, at least 1")
    return _replay_all(args, argv, configs)


# -- shipping ---------------------------------------------------------------------------------------------

def ship(game: str, work: Path, sessions: Path, *, relay_by: str = "agent", fresh: bool = False) -> Path:
    """Copies a finished direct-LLM team recording (``work/batch``, ``work/arena``) into ``sessions/<game>/``
    with its provenance; the folder it wrote.

    Raises:
      ExperimentError: a file missing, another game's run, requests still waiting, or no finished match of the
        team (one line naming what).
    """
    from cwm import games
    from cwm.llm import BatchFileClient, LLMError
    from cwm.llm.batch import pending_requests
    from cwm.llm.provenance import relay_by as relay_name

    spec = games.resolve(game)
    batch, arena_dir = work / "batch", work / "arena"
    for path in [*(batch / n for n in BATCH_FILES), arena_dir / "config.json", arena_dir / "matches.jsonl"]:
        if not path.is_file():
            raise common.ExperimentError(f"{work}: {path} is missing; is it a recording's folder?")
    config = _read_json(arena_dir / "config.json", "the recording's arena config")
    if config.get("game") != spec.name:
        raise common.ExperimentError(f"{arena_dir}: a tournament of {config.get('game')!r}, not of {spec.name}")
    try:
        waiting = len(pending_requests(batch))
        replies = BatchFileClient(batch).provenance()
    except LLMError as e:
        raise common.ExperimentError(f"{batch}: {e}") from None
    if waiting:
        raise common.ExperimentError(f"{batch}: {waiting} request(s) still wait for replies: finish the recording "
                                     f"(answer them and run its `cwm arena` again) before shipping")
    deals = recorded_deals(arena_dir, f"llm:batch:{batch.resolve().name}")
    target = sessions / spec.name
    target.mkdir(parents=True, exist_ok=True)
    for name in BATCH_FILES:
        shutil.copyfile(batch / name, target / name)
    provenance = {
        "game": spec.name, "team": f"{LLM_LABEL}+{LLM_LABEL}", "batch_folder": batch.resolve().name,
        "answered_by": replies.answered_by, "relay": relay_name(relay_by, replies.relay), "date": replies.date,
        "replies": replies.replies, "prompts_hashed": replies.prompts_hashed, "arena": config,
        "matches": len(deals), "deals": deals,
        "note": ("each reply answers one move prompt and came from a fresh instance of the answering model that "
                 "saw only that prompt (the relay's account)" if fresh else
                 "each reply answers one move prompt; one answering instance may have answered several "
                 "independent prompts (the relay's account says how)")}
    common.write_json(target / PROVENANCE, provenance)
    print(f"shipped: {target} ({len(deals)} deal(s), {replies.replies} replies, {replies.prompts_hashed} with a "
          f"matching prompt hash)")
    return target


def recorded_deals(arena_dir: Path, fingerprint: str) -> list[dict[str, Any]]:
    """The team's finished matches in ``arena_dir/matches.jsonl`` (every seat ``fingerprint``), by index: the
    index, deal seed, score, forfeit kind, moves and the SHA-256 of its actions.

    Raises:
      ExperimentError: none found, a void match, a match without a deal, or an index missing.
    """
    from cwm.arena.plan import load_results

    found = sorted((r for r in load_results(arena_dir / "matches.jsonl").values()
                    if r.fingerprints and set(r.fingerprints) == {fingerprint}), key=lambda r: r.index)
    if not found:
        raise common.ExperimentError(f"{arena_dir}: no finished match of the team {fingerprint}")
    if [r.index for r in found] != list(range(len(found))) or any(r.void or r.deal is None for r in found):
        raise common.ExperimentError(f"{arena_dir}: the team's matches are not indices 0..{len(found) - 1}, each "
                                     f"finished on a recorded deal")
    return [deal_entry(r) for r in found]


def deal_entry(result: Any) -> dict[str, Any]:
    """What a shipped session keeps of one match, and what its replay must equal."""
    return {"index": result.index, "deal": result.deal, "score": float(result.returns[0]),
            "forfeit": result.forfeit_kind or None, "moves": result.moves,
            "actions_sha256": hashlib.sha256(json.dumps(list(result.actions)).encode()).hexdigest()}


def _read_json(path: Path, what: str) -> dict[str, Any]:
    from cwm.files import RUN_FILE_BYTES, loads_bounded, read_bounded

    try:
        data = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what=what), where=str(path))
    except (OSError, ValueError) as e:
        raise common.ExperimentError(f"{path}: {what} cannot be read ({e})") from None
    if not isinstance(data, dict):
        raise common.ExperimentError(f"{path}: {what} is not a JSON object")
    return data


# -- replay -----------------------------------------------------------------------------------------------

def _replay_all(args: argparse.Namespace, argv: list[str], configs: tuple[common.GameConfig, ...]) -> int:
    from cwm.executors import make_executor

    started = _dt.datetime.now(_dt.timezone.utc)
    out = common.run_directory(args.out, EXPERIMENT)
    figure = TeamFigureConfig(configs, args.llm, arena_figure.parse_bundles(args.bundles),
                              str(Path(args.sessions).resolve()), args.first_seed, args.cache, args.executor,
                              str(out), args.planner_max_rollout_steps)
    common.begin(out, figure)
    executor = make_executor(args.executor)
    try:
        rows = [replay_game(config, figure, args, executor) for config in configs]
    finally:
        executor.close()
    text = markdown(rows)
    (out / "teams.md").write_text(text, encoding="utf-8")
    common.write_json(out / "teams.json", {"rows": rows})
    common.write_record(out, experiment=EXPERIMENT, config=figure, argv=argv,
                        llm={"direct_policy": {r["game"]: r.get("session") for r in rows}},
                        prompt_hashes={"direct_policy": common.policy_prompt_hashes()},
                        seeds={r["game"]: [r["arena"]["seed"]] for r in rows if r.get("arena")},
                        results={"rows": rows}, started=started)
    print(text)
    return 0


def replay_game(config: common.GameConfig, figure: TeamFigureConfig, args: argparse.Namespace,
                executor: Any) -> dict[str, Any]:
    """One game's row: its shipped team replayed and the other teams played on the same deals (a game with
    no shipped session: a row saying so)."""
    from cwm import games

    spec = games.resolve(config.game)
    shipped = Path(figure.sessions) / spec.name
    if not all((shipped / n).is_file() for n in (*BATCH_FILES, PROVENANCE)):
        return {"game": spec.name, "status": f"no shipped team session in {shipped}"}
    provenance = _read_json(shipped / PROVENANCE, "the session's provenance")
    plan = recorded_plan(provenance, spec.name, args)
    game_dir = Path(figure.out) / config.game
    batch = game_dir / str(provenance.get("batch_folder") or "batch")
    batch.mkdir(parents=True, exist_ok=True)
    for name in BATCH_FILES:  # a copy: replaying never writes into the shipped session
        shutil.copyfile(shipped / name, batch / name)
    agents, pairings, absent = lineup(config, figure, game_dir, batch, plan.settings)
    results = play(spec.name, agents, plan.replace(pairings=pairings), game_dir / "arena", (executor, figure.executor),
                   shipped=shipped, yes=args.yes, quiet=args.quiet)
    cutoff = figure.planner_max_rollout_steps
    if cutoff is not None:
        capped_agents, capped_pairings = capped_lineup(agents, pairings, cutoff)
        capped = capped_plan(plan, provenance, cutoff).replace(pairings=capped_pairings)
        results = [*results, *measured(spec.name, capped_agents, capped, game_dir / f"arena-cut{cutoff}",
                                       (executor, figure.executor), yes=args.yes, quiet=args.quiet)]
    check_replayed(provenance, results, fingerprint=f"llm:batch:{batch.name}")
    return row(spec, results, absent, provenance) | {"planner_max_rollout_steps": cutoff}


def recorded_plan(provenance: dict[str, Any], game: str, args: argparse.Namespace) -> Any:
    """The tournament plan of the recording (its seed, settings, move limit and matches per team), checked to
    hash as the recorded settings do, so every deal is the recorded one.

    Raises:
      ExperimentError: the provenance lacks the arena's settings or is another game's, a flag asks for other
        matches, simulations or rollouts than the recording's, or the settings do not rebuild exactly.
    """
    from cwm import arena
    from cwm.agents.specs import Settings
    from cwm.arena import identity
    from planners.config import SearchConfig

    recorded = provenance.get("arena")
    if not isinstance(recorded, dict) or recorded.get("game") != game or not isinstance(recorded.get("settings"), dict):
        raise common.ExperimentError(f"the shipped session of {game} does not hold its arena's settings for {game}")
    settings = recorded["settings"]
    try:
        matches = provenance["matches"]
        search = SearchConfig.from_json(settings["search"])
        plan = arena.TournamentPlan(
            matches=int(matches), seed=int(recorded["seed"]), move_time_limit=recorded.get("move_time_limit"),
            settings=Settings(search=search, **{k: v for k, v in settings.items() if k != "search"}))
    except (KeyError, TypeError, ValueError) as e:
        raise common.ExperimentError(f"the shipped session of {game}: its arena settings do not read ({e})") from None
    asked = {"--matches": (args.matches, plan.matches), "--sims": (args.sims, search.num_simulations),
             "--rollouts": (args.rollouts, search.rollouts)}
    for flag, (given, kept) in asked.items():
        if given is not None and given != kept:
            raise common.ExperimentError(f"{flag} {given}: a replay plays the recording's deals under its settings "
                                         f"({flag} {kept}); leave {flag} out")
    if identity.settings_hash(plan.recorded()) != identity.settings_hash(
            {k: v for k, v in recorded.items() if k != "game"}):
        raise common.ExperimentError(f"the shipped session of {game}: its arena settings do not rebuild exactly "
                                     f"(another cwm version's settings?), so its deals could not be dealt again")
    return plan


def lineup(config: common.GameConfig, figure: TeamFigureConfig, game_dir: Path, batch: Path, settings: Any
           ) -> tuple[list[str], list[tuple[str, str]], dict[str, str]]:
    """The agents, the teams (pairings) and, per team left out, why: the direct LLM on ``batch``, random, the
    CWM agent on its bundle, and the ground-truth planner where it can play the game."""
    from cwm import games
    from cwm.arena import ArenaError
    from cwm.arena.run import check_agents

    spec = games.resolve(config.game)
    agents = [f"{LLM_LABEL}=llm:batch:{batch.resolve()}", RANDOM_LABEL]
    pairings = [(LLM_LABEL, LLM_LABEL), (RANDOM_LABEL, RANDOM_LABEL)]
    absent: dict[str, str] = {}
    bundle = cwm_bundle(config, figure, game_dir)
    cwm = arena_figure.CWM_LABEL
    if isinstance(bundle, str):
        absent[f"{cwm}+{cwm}"] = absent[f"{cwm}+{RANDOM_LABEL}"] = bundle
    else:
        agents.append(f"{cwm}=cwm:{bundle.resolve()}")
        pairings += [(cwm, cwm), (cwm, RANDOM_LABEL)]
    absent[f"{cwm}+{LLM_LABEL}"] = NOT_REPLAYABLE
    truth = arena_figure.opponents(spec.name, None)[1]
    try:
        check_agents(spec.name, {truth: truth}, settings)
        agents.append(truth)
        pairings.append((truth, truth))
    except ArenaError as e:
        absent[f"{truth}+{truth}"] = f"{truth} cannot play {spec.name} here: {e}"
    return agents, pairings, absent


def capped_lineup(agents: list[str], pairings: list[tuple[str, str]], cutoff: int
                  ) -> tuple[list[str], list[tuple[str, str]]]:
    """The planner teams' agents and teams at the rollout cut-off: every team with a planner (every one but
    the direct-LLM and random teams), each planner labelled ``LABEL-cutK`` so that its team is a row of its own
    (random keeps its label: its play has no cut-off)."""
    from cwm.agents.specs import parse_agent_spec

    specs = {s.label: s for s in map(parse_agent_spec, agents)}
    planners = [label for label in specs if label not in (LLM_LABEL, RANDOM_LABEL)]
    renamed = {label: f"{label}-cut{cutoff}" for label in planners} | {RANDOM_LABEL: RANDOM_LABEL}
    teams = [pair for pair in pairings if any(seat in planners for seat in pair)
             and all(seat in renamed for seat in pair)]
    used = {seat for pair in teams for seat in pair}
    capped = [f"{renamed[label]}={specs[label].bare}" if label in planners else agent
              for label, agent in zip(specs, agents) if label in used]
    return capped, [(renamed[a], renamed[b]) for a, b in teams]


def capped_plan(plan: Any, provenance: dict[str, Any], cutoff: int) -> Any:
    """The recorded plan with a rollout cut-off of ``cutoff`` moves, on the recorded deals given by their seeds
    (the cut-off changes the settings' hash, from which the deals would otherwise be dealt).

    Raises:
      ExperimentError: the provenance's deals are not one per match, indices 0..n-1.
    """
    deals = sorted(provenance.get("deals", []), key=lambda d: int(d["index"]))
    if [int(d["index"]) for d in deals] != list(range(plan.matches)):
        raise common.ExperimentError(f"the shipped session's deals are not its {plan.matches} matches' deals, "
                                     f"indices 0..{plan.matches - 1}: the planner teams cannot be dealt them")
    search = dataclasses.replace(plan.settings.search, max_rollout_steps=cutoff)
    return plan.replace(settings=dataclasses.replace(plan.settings, search=search),
                        deals=tuple(int(d["deal"]) for d in deals))


def cwm_bundle(config: common.GameConfig, figure: TeamFigureConfig, game_dir: Path) -> Path | str:
    """The CWM agent's bundle (given, exported by an earlier run, or synthesized here from the game's shipped
    real session as ``experiments/arena_figure.py`` does), or why there is none."""
    setup = arena_figure.ArenaFigureConfig((config,), figure.llm, figure.bundles, None, "open", None, figure.seed,
                                           None, figure.cache, figure.executor, str(game_dir.parent))
    llm = arena_figure.check_inputs(setup, game_dir.parent).get(config.game)  # none: a bundle was given
    if isinstance(llm, imperfect.NoRecording):
        return f"no recorded synthesis session to make the CWM agent's bundle from ({llm.path})"
    return arena_figure.obtain_bundle(config, setup, game_dir, llm)  # type: ignore[arg-type]


def play(game: str, agents: list[str], plan: Any, out: Path, executor: tuple[Any, str], *, shipped: Path,
         yes: bool, quiet: bool) -> list[Any]:
    """The direct-LLM team first (a reply missing stops the replay before the costly teams play), then every
    team, resumed in one folder; the cost estimate is printed and confirmed first, and written with the real
    wall and CPU time to ``out/cost.json``. ``executor``: the executor and its spec."""
    from cwm import arena
    from cwm.llm import PendingBatch

    try:
        arena.tournament(game, agents[:1], plan.replace(pairings=[(LLM_LABEL, LLM_LABEL)]), out_dir=out,
                         executor=executor[0], progress=not quiet)
    except PendingBatch as e:
        raise common.ExperimentError(
            f"{shipped}: the shipped session has no reply for {e.pending} request(s) of the direct-LLM team (a "
            f"replay asks no model; a changed prompt or rules text asks new ones): record the session again"
        ) from None
    return measured(game, agents, plan, out, executor, yes=yes, quiet=quiet)


def measured(game: str, agents: list[str], plan: Any, out: Path, executor: tuple[Any, str], *, yes: bool,
             quiet: bool) -> list[Any]:
    """A tournament with its cost estimate printed and confirmed first, and written with the real wall and CPU
    time to ``out/cost.json``."""
    from cwm import arena
    from cwm.arena import cost

    pool, where = executor
    estimate = cost.estimate_tournament(game, agents, plan, executor=where, out_dir=out)
    cost.confirm(estimate, yes=yes)
    start = time.perf_counter()
    with cost.cpu_meter() as used:
        results = arena.tournament(game, agents, plan, out_dir=out, executor=pool, progress=not quiet)
    cost.write_record(out / "cost.json", estimate, time.perf_counter() - start, used.cpu_s())
    return results


def check_replayed(provenance: dict[str, Any], results: Sequence[Any], *, fingerprint: str) -> None:
    """Refuses a replay whose direct-LLM team did not play the recorded deals to the recorded ends, or whose
    other teams were dealt other cards (one line naming the deal).

    Raises:
      ExperimentError: a recorded deal replayed to another deal seed, score, forfeit, length or action list,
        or a team's match ``i`` dealt other than the recorded deal ``i``.
    """
    recorded = {int(d["index"]): d for d in provenance.get("deals", [])}
    replayed = {r.index: deal_entry(r) for r in results if r.fingerprints and set(r.fingerprints) == {fingerprint}}
    for index, deal in recorded.items():
        if replayed.get(index) != deal:
            raise common.ExperimentError(f"the direct-LLM team's deal {index} replayed as {replayed.get(index)}, "
                                         f"recorded as {deal}: the game or the agent changed since the recording")
    other = next((r for r in results if r.index in recorded and r.deal != recorded[r.index]["deal"]), None)
    if other is not None:
        raise common.ExperimentError(f"{'+'.join(other.seats)} match {other.index} was dealt {other.deal}, not the "
                                     f"recorded deal {recorded[other.index]['deal']}")


def row(spec: Any, results: Sequence[Any], absent: dict[str, str], provenance: dict[str, Any]) -> dict[str, Any]:
    """A game's row: the team rows and comparisons (``cwm.arena.teams``), the reference line, the teams left
    out and why, the direct LLM's answers, forfeits, calls and tokens, and who answered."""
    from cwm import games
    from cwm.arena import teams
    from cwm.arena.report import finite_json

    truth = games.load_game(spec)
    team_rows = teams.team_rows(results, max_score=float(truth.max_utility()), min_score=float(truth.min_utility()))
    search = provenance["arena"]["settings"]["search"]
    return {"game": spec.name, "deals": provenance["matches"], "arena": provenance["arena"],
            "settings": f"{search['num_simulations']} simulations, {search['rollouts']} rollouts",
            "teams": [{k: finite_json(v) for k, v in r.items()} for r in team_rows],
            "comparisons": [{k: finite_json(v) for k, v in c.items()} for c in teams.team_comparisons(results)],
            "reference": teams.reference_line(spec), "absent": absent, "direct_llm": llm_stats(results),
            "session": {k: provenance.get(k) for k in ("answered_by", "relay", "date", "replies", "prompts_hashed",
                                                       "note")}}


def llm_stats(results: Sequence[Any]) -> dict[str, Any]:
    """The direct LLM's seats over its team's matches: moves asked, illegal and unreadable answers per move
    asked, forfeits per match, calls and tokens per match."""
    mine = [r for r in results if set(r.seats) == {LLM_LABEL} and not r.void]
    totals = dict.fromkeys(("llm_calls", "input_tokens", "output_tokens", "illegal", "unreadable", "moves_asked"), 0)
    for r in mine:
        for stats in r.stats or ():
            for k in totals:
                totals[k] += int((stats or {}).get(k, 0)) if isinstance(stats, dict) else 0
    n, asked = len(mine), totals["moves_asked"]
    return {"matches": n, "moves_asked": asked, "llm_calls": totals["llm_calls"],
            "illegal_per_move": totals["illegal"] / asked if asked else None,
            "unreadable_per_move": totals["unreadable"] / asked if asked else None,
            "forfeits_per_match": sum(r.forfeit_seat is not None for r in mine) / n if n else None,
            "calls_per_match": totals["llm_calls"] / n if n else None,
            "input_tokens_per_match": totals["input_tokens"] / n if n else None,
            "output_tokens_per_match": totals["output_tokens"] / n if n else None}


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Per game: the team table with its comparisons and reference line, the teams left out, and the direct
    LLM's answers."""
    from cwm.arena import teams

    parts = ["# Teams on shared deals: the direct-LLM team (replayed), random, CWM, CWM + random, ground truth", ""]
    for r in rows:
        if r.get("status"):
            parts += [f"## {r['game']}", "", r["status"], ""]
            continue
        parts += [f"## {r['game']}: {r['deals']} deal(s), {r['settings']} per move", "",
                  teams.markdown(r["teams"], r["comparisons"], reference=r["reference"])]
        if r.get("planner_max_rollout_steps") is not None:
            k = r["planner_max_rollout_steps"]
            parts += [f"Rows labelled `-cut{k}`: the planner under the same settings with a rollout cut-off of {k} "
                      f"moves (a rollout stops after {k} moves and is scored by the returns so far), on the same "
                      f"deals (given by their seeds); random plays as ever.", ""]
        parts += ["Teams not in the table:", ""] + [f"- {team}: {why}" for team, why in r["absent"].items()] + [""]
        parts += [_llm_line(r["direct_llm"], r["session"]), ""]
    return "\n".join(parts)


def _llm_line(stats: dict[str, Any], session: dict[str, Any]) -> str:
    def num(value: float | None, digits: int = 3) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"

    tokens = ("not counted (relayed replies)" if stats["llm_calls"] and not stats["input_tokens_per_match"]
              and not stats["output_tokens_per_match"] else
              f"{num(stats['input_tokens_per_match'], 0)} in / {num(stats['output_tokens_per_match'], 0)} out")
    return (f"Direct LLM ({session.get('answered_by')}; {session.get('relay')}, {session.get('date')}; "
            f"{session.get('prompts_hashed')} of {session.get('replies')} replies with a matching prompt hash): "
            f"{num(stats['illegal_per_move'])} illegal and {num(stats['unreadable_per_move'])} unreadable answers "
            f"per move asked ({stats['moves_asked']} moves), {num(stats['forfeits_per_match'])} forfeits per "
            f"match, {num(stats['calls_per_match'], 1)} calls per match, tokens per match {tokens}.")


if __name__ == "__main__":
    sys.exit(main())
