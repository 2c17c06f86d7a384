"""The direct-LLM baseline: the CWM agent against an LLM that chooses each move itself, played through the
batch relay and replayed offline (the layout of the paper's Figures 2-4).

For each game the CWM agent plays its bundle (synthesized from the game's shipped real session, as
``experiments/arena_figure.py`` does) against ``llm:batch:DIR``, both seats, ``--matches`` per seat. The LLM
sees the rules, example games and the game so far, and no list of legal moves; an illegal or unreadable answer
gets a rethink prompt, up to three times, after which it forfeits (``cwm.agents.llm``).

Recording (``--work DIR``): each call reads the answers written so far (``DIR/answers/<key>.md``, with a
``<key>.sha256`` the relay wrote from the text it gave the answering model), plays every match as far as
they allow, writes the prompts still waiting to ``DIR/prompts/<key>.md`` and exits with status 3; a match
that waits is played again from its start on the next call (same seeds, its earlier answers read back). Hand
each prompt, and nothing else, to the answering model and write its reply verbatim, then run again. Once every
match has finished, ``--ship`` copies the batch directory's requests and replies, with ``provenance.json``
(who answered, the relay, the bundle's fingerprint, the matches), into ``cwm/data/recordings/direct/<game>/``.

Offline (no ``--work``): the shipped sessions are replayed (their requests are answered from their replies, so
no model is asked) and the figure is printed: per game, the CWM agent's wins, draws and losses against the
direct LLM with intervals and the paired comparison, the direct LLM's illegal answers per move asked and its
forfeits per match, and LLM calls and tokens per game for both agents (the CWM agent's are its synthesis calls,
paid once; it makes none while it plays). A game without a shipped session is a row saying so.

    python experiments/direct_llm_figure.py --games tic_tac_toe --work runs/direct --answered-by NAME  # record
    python experiments/direct_llm_figure.py --games tic_tac_toe --out runs/direct-replay               # replay
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository root importable for `experiments`
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from cwm.executors import make_executor
from cwm.llm.provenance import RELAY_BY
from experiments import arena_figure, common, figure_report

EXPERIMENT = "direct_llm_figure"
GAMES = ("tic_tac_toe", "connect_four", "gen_tic_tac_toe", "leduc_poker", "bargaining")
SHIPPED = Path(__file__).resolve().parent.parent / "cwm" / "data" / "recordings" / "direct"
LLM_LABEL = "direct-llm"
BATCH_FILES = ("pending.jsonl", "replies.jsonl")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=EXPERIMENT, description=__doc__.splitlines()[0])
    common.add_common_args(p, default_executor="local")
    p.add_argument("--work", default=None, metavar="DIR",
                   help="record through the batch relay in DIR (resumed); without it, replay the shipped sessions")
    p.add_argument("--answered-by", default=None, metavar="NAME", help="the answering model, as precisely as known "
                   "(needed with --work)")
    p.add_argument("--ship", action="store_true", help="with --work: once every match has finished, copy the "
                   "session into cwm/data/recordings/direct/<game>/")
    p.add_argument("--relay-by", choices=RELAY_BY, default="agent",
                   help="with --ship: who carried each prompt to the answering model and its reply back, agent (a "
                        "language-model agent, the default) or person; the provenance's relay says it")
    p.add_argument("--fresh-instances", action="store_true",
                   help="with --ship: every reply came from a fresh instance of the answering model that saw only "
                        "its one prompt (the provenance says so; without it, that one instance may have answered "
                        "several independent prompts)")
    p.add_argument("--sessions", default=str(SHIPPED), metavar="DIR",
                   help="the folder of recorded sessions: replayed offline, and where --ship copies one "
                        "(default: cwm's, cwm/data/recordings/direct/)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return common.script_main(parser(), _run, EXPERIMENT, argv)


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.work and not args.answered_by:
        raise common.ExperimentError("--work records a session: say who answers with --answered-by NAME")
    if args.ship and not args.work:
        raise common.ExperimentError("--ship copies a recorded session: it needs --work DIR")
    configs = common.game_configs(args, GAMES)
    out = Path(args.work) if args.work else common.run_directory(args.out, EXPERIMENT)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for config in configs:
        batch = _batch_dir(config.game, out, args)
        if batch is None:
            rows.append({"game": config.game, "status": f"no recorded session in {Path(args.sessions) / config.game}"})
            continue
        rows.append(_play_game(config, batch, out / config.game, args))
    text = markdown(rows)
    (out / "direct_llm.md").write_text(text, encoding="utf-8")
    common.write_json(out / "direct_llm.json", {"rows": rows})
    print(text)
    if args.ship:
        for config in configs:
            _ship(config.game, out, Path(args.sessions), relay_by=args.relay_by, fresh=args.fresh_instances)
    return 0


def _batch_dir(game: str, out: Path, args: argparse.Namespace) -> Path | None:
    """The batch directory the direct LLM reads its replies from: the relay's, with the answers written so far
    read in (recording); a copy of the shipped session (replay; ``None`` when there is none)."""
    from cwm.llm.batch_texts import import_answers

    batch = out / game / "batch"
    if args.work:
        answers = out / "answers"
        batch.mkdir(parents=True, exist_ok=True)
        if answers.is_dir():
            answered, _ = import_answers(batch, answers, model=args.answered_by)
            print(f"{game}: {answered} answer(s) read from {answers}")
        return batch
    shipped = Path(args.sessions) / game
    if not all((shipped / name).is_file() for name in BATCH_FILES):
        return None
    batch.mkdir(parents=True, exist_ok=True)
    for name in BATCH_FILES:  # a copy: replaying never writes into the package's data
        shutil.copyfile(shipped / name, batch / name)
    return batch


def _play_game(config: common.GameConfig, batch: Path, game_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The CWM agent against the direct LLM on ``batch``, both seats; the game's row. A match waiting for a reply
    ends the call (``PendingBatch``, exit status 3) after the waiting prompts are written out."""
    from cwm import arena, games
    from cwm.agents.specs import Settings, parse_agent_spec
    from cwm.arena import identity
    from cwm.arena import report as arena_report
    from cwm.llm import PendingBatch
    from cwm.llm.batch_texts import export_pending
    from planners.config import SearchConfig

    spec = games.resolve(config.game)
    figure = arena_figure.ArenaFigureConfig((config,), args.llm, (), None, "open", None, args.first_seed, None,
                                            args.cache, args.executor, str(game_dir.parent))
    llm = arena_figure.check_inputs(figure, game_dir.parent)[config.game]
    bundle = arena_figure.obtain_bundle(config, figure, game_dir, llm)  # type: ignore[arg-type]
    agents = [f"{arena_figure.CWM_LABEL}=cwm:{bundle.resolve()}", f"{LLM_LABEL}=llm:batch:{batch.resolve()}"]
    fingerprint = identity.agent_fingerprint(parse_agent_spec(agents[0]))
    if not args.work:
        _check_recorded_against(Path(args.sessions) / spec.name / "provenance.json", fingerprint)
    plan = arena.TournamentPlan(matches=config.matches, seed=args.first_seed,
                                settings=Settings(search=SearchConfig(num_simulations=config.sims,
                                                                      rollouts=config.rollouts)))
    executor = make_executor(args.executor)
    try:
        results = arena.tournament(spec.name, agents, plan, out_dir=game_dir / "arena", executor=executor,
                                   progress=not args.quiet)
    except PendingBatch:
        if args.work:
            written = export_pending(batch, Path(args.work) / "prompts")
            print(f"{spec.name}: {len(written)} prompt(s) wait in {Path(args.work) / 'prompts'}; write each reply "
                  f"to {Path(args.work) / 'answers'}/<key>.md (and <key>.sha256) and run again")
        raise
    finally:
        executor.close()
    return row(spec, results, bundle) | {"bundle_fingerprint": fingerprint, "matches_per_seat": config.matches,
                                         "settings": f"{config.sims} simulations, {config.rollouts} rollouts",
                                         "paired": next((c for c in arena_report.paired_comparisons(spec, results)
                                                         if c["agent"] == arena_figure.CWM_LABEL), None)}


def _check_recorded_against(provenance: Path, fingerprint: str) -> None:
    """Refuses to replay a session recorded against another bundle: the CWM agent would play other moves, so the
    direct LLM would be asked prompts no one answered (the run would only wait for replies)."""
    from cwm.files import RUN_FILE_BYTES, loads_bounded, read_bounded

    try:
        recorded = loads_bounded(read_bounded(provenance, RUN_FILE_BYTES, what="session provenance"),
                                 where=str(provenance))
    except (OSError, ValueError) as e:
        raise common.ExperimentError(f"{provenance}: cannot be read ({e})") from None
    found = recorded.get("bundle_fingerprint") if isinstance(recorded, dict) else None
    if found != fingerprint:
        raise common.ExperimentError(
            f"{provenance}: the session was recorded against the bundle {str(found)[:80]!r}, and this run's bundle "
            f"is {fingerprint!r}: its matches would ask the direct LLM new prompts; record the session again "
            f"(--work) against this bundle")


def row(spec: Any, results: Sequence[Any], bundle: Path) -> dict[str, Any]:
    """The figure's row of one game from its matches: the CWM agent's outcome against the direct LLM, the direct
    LLM's illegal answers and forfeits, and each agent's LLM calls and tokens per game."""
    from cwm.arena import report as arena_report

    summary = next(r for r in arena_report.summarize(results)
                   if r["agent"] == arena_figure.CWM_LABEL and r["seat"] == "all")
    calls = tokens_in = tokens_out = illegal = unreadable = asked_moves = forfeits = 0
    for r in results:
        seat = r.seats.index(LLM_LABEL)
        stats = r.stats[seat] if r.stats else {}
        calls += int(stats.get("llm_calls", 0))
        tokens_in += int(stats.get("input_tokens", 0))
        tokens_out += int(stats.get("output_tokens", 0))
        illegal += int(stats.get("illegal", 0))
        unreadable += int(stats.get("unreadable", 0))
        asked_moves += int(stats.get("moves_asked", 0))
        forfeits += int(r.forfeit_seat == seat)
    n = len(results)
    synthesis = figure_report.provenance(bundle)
    return {"game": spec.name, "matches": n, "win_rate": summary["win_rate"], "draw_rate": summary["draw_rate"],
            "loss_rate": summary["loss_rate"], "win_ci": [summary["win_lo"], summary["win_hi"]],
            "llm_illegal_per_move": illegal / asked_moves if asked_moves else None,
            "llm_unreadable_per_move": unreadable / asked_moves if asked_moves else None,
            "llm_forfeit_rate": forfeits / n if n else None, "llm_moves_asked": asked_moves,
            "llm_calls_per_game": calls / n if n else None, "llm_input_tokens_per_game": tokens_in / n if n else None,
            "llm_output_tokens_per_game": tokens_out / n if n else None,
            "cwm_calls_in_play": 0, "cwm_synthesis_calls": synthesis.get("llm_calls"),
            "cwm_synthesis_answered_by": synthesis.get("answered_by") or synthesis.get("llm")}


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The figure as a table: one row per game."""
    lines = ["# CWM agent against the direct LLM (both seats pooled)", "",
             "| game | matches | CWM win / draw / loss | win 95% CI | paired difference | LLM illegal per move "
             "| LLM forfeits | LLM calls / game | LLM tokens in / out per game | CWM calls in play (synthesis, once) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("status"):
            lines.append(f"| {r['game']} | {r['status']} |  |  |  |  |  |  |  |  |")
            continue
        ci = r.get("win_ci")
        paired = r.get("paired") or {}
        diff = (f"{paired['mean']:+.3f} [{paired['lo']:+.3f}, {paired['hi']:+.3f}], MDE ±{paired['mde']:.3f}"
                if {"mean", "lo", "hi", "mde"} <= paired.keys() and None not in
                (paired["mean"], paired["lo"], paired["hi"], paired["mde"]) else "n/a")
        lines.append(
            f"| {r['game']} | {r['matches']} | {r['win_rate']:.2f} / {r['draw_rate']:.2f} / {r['loss_rate']:.2f} | "
            f"{_interval(ci)} | {diff} | {_num(r['llm_illegal_per_move'])} ({r['llm_moves_asked']} moves) | "
            f"{_num(r['llm_forfeit_rate'])} | {_num(r['llm_calls_per_game'], 1)} | "
            f"{_tokens(r)} | "
            f"0 ({r['cwm_synthesis_calls']}) |")
    return "\n".join(lines) + "\n"


def _tokens(r: dict[str, Any]) -> str:
    """Tokens in / out per game; "not counted" where replies came through files (a relay reports no usage)."""
    if r["llm_calls_per_game"] and not r["llm_input_tokens_per_game"] and not r["llm_output_tokens_per_game"]:
        return "not counted (relayed replies)"
    return f"{_num(r['llm_input_tokens_per_game'], 0)} / {_num(r['llm_output_tokens_per_game'], 0)}"


def _interval(ci: Any) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]" if isinstance(ci, (list, tuple)) and len(ci) == 2 else "n/a"


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _ship(game: str, work: Path, sessions: Path, *, relay_by: str = "agent", fresh: bool = False) -> None:
    """Copies a finished session (requests, replies, provenance) into ``sessions`` (cwm's recorded sessions
    unless ``--sessions`` names another folder). The provenance's ``relay`` says who carried the texts
    (``relay_by``) and whether every reply's prompt hash matched its request; its ``note`` says whether each
    reply came from a fresh answering instance (``fresh``) or one instance may have answered several."""
    from cwm.llm import BatchFileClient
    from cwm.llm.provenance import relay_by as relay_name

    batch = work / game / "batch"
    result = json.loads((work / "direct_llm.json").read_text(encoding="utf-8"))
    found = next((r for r in result["rows"] if r["game"] == game and not r.get("status")), None)
    if found is None:
        raise common.ExperimentError(f"{game}: no finished session in {work} to ship")
    replies = BatchFileClient(batch).provenance()
    target = sessions / game
    target.mkdir(parents=True, exist_ok=True)
    for name in BATCH_FILES:
        shutil.copyfile(batch / name, target / name)
    provenance = {"game": game, "answered_by": replies.answered_by, "relay": relay_name(relay_by, replies.relay),
                  "date": replies.date,
                  "replies": replies.replies, "prompts_hashed": replies.prompts_hashed,
                  "bundle_fingerprint": found["bundle_fingerprint"], "matches": found["matches"],
                  "matches_per_seat": found["matches_per_seat"], "settings": found["settings"],
                  "note": ("each reply answers one move prompt and came from a fresh instance of the answering "
                           "model that saw only that prompt (the relay's account)" if fresh else
                           "each reply answers one move prompt; one answering instance may have answered several "
                           "independent prompts (the relay's account says how)")}
    common.write_json(target / "provenance.json", provenance)
    print(f"shipped: {target}")


if __name__ == "__main__":
    sys.exit(main())
