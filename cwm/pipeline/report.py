"""The main job's report: ``report.json``, ``record.json`` and ``report.md`` of a ``cwm run`` directory."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
from pathlib import Path
from typing import Any

from cwm import games
from cwm.arena import compare, teams
from cwm.arena import report as arena_report
from cwm.checks.posterior import OPPONENT_MODEL
from cwm.files import RUN_FILE_BYTES, loads_bounded, read_bounded
from cwm.stats import perfect_score_note
from cwm.synthesis.report import accuracy_text, git_commit
from cwm.text import clean, counted
from cwm.types import JSON

SYNTHESIS_KEYS = ("solved", "llm_calls", "train_accuracy", "test_accuracy", "train_by_type", "test_by_type",
                  "cost_usd", "possibly_paid_calls", "model", "strategy", "seed", "train_checked", "test_checked",
                  "test_games", "rules")


@dataclasses.dataclass(frozen=True)
class Stages:
    """What the stages of one run produced.

    Attributes:
      synthesis, inference: the world-model and (hidden information) inference synthesis results, as JSON.
      bundle_dir: the bundle, relative to the run directory (which may move).
      arena_rows: the arena's summary rows of the agent ``label``; on_policy: its on-policy accuracy
        (``cwm.pipeline.on_policy``).
      search: the ``SearchConfig`` the arena's agents got, in full, as JSON.
      label: the CWM agent's name in the arena.
      posterior: hidden information only: the inference's posterior check, off- and on-policy
        (``cwm.pipeline.beliefs.posterior_record``).
      provenance: who answered the world-model synthesis and how the texts travelled
        (``cwm.llm.Provenance`` as JSON; ``None``: not recorded).
      comparisons: the CWM agent's paired comparisons (``cwm.arena.compare``); agents: what each arena agent
        was (planner, simulations, rollouts, inference, model).
    """

    synthesis: dict[str, JSON]
    inference: dict[str, JSON] | None
    bundle_dir: Path
    arena_rows: list[dict[str, JSON]]
    on_policy: dict[str, JSON]
    search: JSON
    label: str
    posterior: dict[str, JSON] | None = None
    provenance: dict[str, JSON] | None = None
    comparisons: list[dict[str, JSON]] = dataclasses.field(default_factory=list)
    agents: dict[str, str] = dataclasses.field(default_factory=dict)


def build(config: Any, game: games.GameSpec, llm_spec: str, stages: Stages) -> dict[str, JSON]:
    """The report of one run of ``game``: its settings and what its stages produced."""
    keep = SYNTHESIS_KEYS
    return {
        "game": game.name,
        "llm": llm_spec,
        "offline_recording": llm_spec.startswith("replay:"),
        "provenance": stages.provenance,
        "config": dataclasses.asdict(config),
        "search": stages.search,  # the SearchConfig the arena's agents got, in full
        "synthesis": {k: stages.synthesis.get(k) for k in keep},
        "inference": None if stages.inference is None else {k: stages.inference.get(k) for k in keep},
        "bundle": stages.bundle_dir.as_posix(),  # relative to the run directory, which may move
        "label": stages.label,
        "arena": stages.arena_rows,
        "arena_comparisons": stages.comparisons,
        "arena_agents": stages.agents,
        "on_policy": stages.on_policy,
        "posterior": stages.posterior,
        "git_commit": git_commit(),
        "finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def write(out: Path, report: dict[str, Any], game: games.GameSpec) -> None:
    """Writes ``report.json``, ``record.json`` (what reproduces the run) and ``report.md`` under ``out``."""
    (out / "report.json").write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    settings = out / "synthesis" / "config.json"
    synthesis_config = loads_bounded(read_bounded(settings, RUN_FILE_BYTES, what="synthesis settings"),
                                     where=str(settings), allow_nan=True)
    results = {"synthesis": report["synthesis"], "inference": report["inference"], "arena": report["arena"],
               "on_policy": report["on_policy"], "posterior": report.get("posterior"), "twins": report.get("twins")}
    record = {"config": report["config"], "search": report["search"], "llm": report["llm"],
              "llm_model": report["synthesis"]["model"], "provenance": report.get("provenance"),
              "request": synthesis_config.get("request"),
              "prompt_hashes": synthesis_config.get("prompt_hashes"), "seed": report["config"]["seed"],
              "git_commit": report["git_commit"], "finished_at": report["finished_at"], "results": results,
              "arena_cost": report.get("arena_cost")}
    (out / "record.json").write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    (out / "report.md").write_text("\n".join(markdown(report, game)) + "\n", encoding="utf-8")


def markdown(report: dict[str, Any], game: games.GameSpec) -> list[str]:
    """The lines of ``report.md``."""
    s = report["synthesis"]
    lines = [f"# cwm run: {report['game']}", "", "## Synthesis", "",
             f"- LLM: {_source(report)}; strategy {s['strategy']}, seed {s['seed']}, rules {_rules(s)}",
             *_stage("world model", "transition accuracy", s)]
    if report["inference"] is not None:
        lines += _stage("inference function (open deck)", "inference accuracy", report["inference"])
    lines += ["- details: [synthesis/summary.md](synthesis/summary.md), plot: synthesis/accuracy.png"
              + (", [inference/summary.md](inference/summary.md)" if report["inference"] is not None else ""),
              *twin_lines(report.get("twins")),
              "", f"## Arena (agent `{report['label']}`: the bundle in `{report['bundle']}/`)", "",
              *_arena_tables(report, game),
              "", "## On-policy accuracy", "", *on_policy_lines(report["on_policy"])]
    if report.get("posterior") is not None:
        lines += ["", "## Beliefs (posterior check)", "", *posterior_lines(report["posterior"])]
    return lines


_PLANNED = {"model": "the synthesized model (model.py)", "twin": "its fast twin (twin.py), stepped",
            "twin with playout": "its fast twin (twin.py) with the twin's own checked playout loop"}


def twin_lines(twins: Any) -> list[str]:
    """The twins section: what the CWM agent planned on, and the fast-twin and PPO stages (run, or why not)."""
    if not isinstance(twins, dict):
        return []
    lines = ["", "## Twins and PPO", "",
             f"- the CWM agent planned on {_PLANNED.get(str(twins.get('planned_on')), 'the synthesized model')}"]
    for what, key in (("fast twin", "fast"), ("PPO", "ppo")):
        record = twins.get(key)
        lines.append(f"- {what}: {_stage_text(record)}")
    return lines


def _stage_text(record: Any) -> str:
    if not isinstance(record, dict):
        return "not recorded"
    where = f" from `{clean(str(record['session']), limit=120)}`" if record.get("session") else ""
    cpu = f", {_finite(record.get('cpu_s')) or 0:.0f} CPU s" if "cpu_s" in record else ""
    if record.get("status") == "skipped":
        return f"skipped: {clean(str(record.get('reason')), limit=400)}{cpu}"
    if record.get("status") == "accepted":
        playout = " with its own playout loop checked" if record.get("playout") else ""
        return (f"accepted{playout} on the equivalence check (projected {_finite(record.get('estimate_cpu_s')) or 0:.0f} "
                f"CPU s){where}{cpu}")
    if record.get("status") == "trained":
        return (f"{record.get('steps'):,} steps on the JAX twin, seed {record.get('seed')}, best mean return "
                f"{_num(record.get('best_score'))} against random in the twin{where}{cpu}; plays in the arena as `ppo`")
    return "not recorded"


def _rules(synthesis: dict[str, Any]) -> str:
    """Which rules the synthesis prompts held (``cwm.games.rules_label``), or that it was not recorded."""
    label = synthesis.get("rules")
    return f"`{label}`" if games.is_rules_label(label) else "not recorded"


def _source(report: dict[str, Any]) -> str:
    """Where the replies came from, in the provenance's short fields (``cwm.llm.provenance``)."""
    prov = report.get("provenance") or {}
    relay = prov.get("relay")
    if report["offline_recording"] and relay in (None, "unknown", "scripted"):
        return "a recorded session shipped with cwm (scripted replies, not a live LLM)"
    where = "a real model's recorded session shipped with cwm" if report["offline_recording"] else f"`{report['llm']}`"
    if not prov:
        return where
    unchecked = " (not machine-checked byte for byte)" if str(relay).endswith("unchecked") else ""
    return f"{where}, answered by {prov.get('answered_by')}; relay `{relay}`{unchecked}; date {prov.get('date')}"


def _arena_tables(report: dict[str, Any], game: games.GameSpec) -> list[str]:
    """The arena's rows and findings: the CWM agent per opponent and seat, or, in a cooperative game, every
    team's score (``cwm.arena.teams``: no win, draw or loss)."""
    planned = (report.get("twins") or {}).get("planned_on", "model")
    on = "the synthesized model" if planned == "model" else f"the synthesized model's fast {planned}"
    planner = f"{_planner(game)} planning on {on}, acting in the real game"
    if report["arena"] and "team" in report["arena"][0]:
        return [teams.markdown(report["arena"], report.get("arena_comparisons") or [],
                               reference=teams.reference_line(game)), *_arena_findings(report, comparisons=False),
                f"Rows are teams of agents seated together on the same deals; `{report['label']}` is the CWM agent "
                f"({planner}). Plot: arena/results.png; every match: arena/matches.jsonl."]
    ppo = " and the PPO policy trained on the JAX twin (`ppo`)" if any(
        row.get("agent") == "ppo" for row in report["arena"]) else ""
    return [arena_report.markdown(report["arena"], outcome=game.outcome), "", *_arena_findings(report),
            f"Rows are the CWM agent ({planner}){ppo} against each opponent, per seat. Plot: arena/results.png; "
            "every match: arena/matches.jsonl."]


def _arena_findings(report: dict[str, Any], *, comparisons: bool = True) -> list[str]:
    """The CWM agent's paired comparisons and what each agent was (a report from before them: nothing)."""
    compared, agents = report.get("arena_comparisons"), report.get("arena_agents")
    matches = report["config"].get("matches")
    return [text for text in (compare.markdown(compared or []) if comparisons else "",
                              compare.settings_markdown(agents, matches) if agents else "") if text]


def _stage(what: str, accuracy: str, s: dict[str, Any]) -> list[str]:
    test = accuracy_text(s["test_accuracy"], s.get("test_checked"),  # train: selected for, so it bounds nothing
                         s.get("test_games"))
    return [f"- {what}: {'solved' if s['solved'] else 'not solved'} after {counted(s['llm_calls'], 'LLM call')} "
            f"(cost ${s['cost_usd'] or 0:.4f}{_possibly_paid(s)}); {accuracy}: train {s['train_accuracy']:.4f}, "
            f"held-out test {test}"]


def _planner(game: games.GameSpec) -> str:
    return "MCTS" if game.perfect_information else "ISMCTS, drawing states by its inference,"


def on_policy_lines(record: dict[str, Any]) -> list[str]:
    """The on-policy section: the model (and inference) checked on the states its agent reached."""
    if not record.get("matches"):
        return [f"No finished arena game of the CWM agent to check ({record.get('skipped', 0)} forfeited or void)."]
    lines = [f"The bundle checked on the {record['matches']} arena games its agent finished, replayed in the "
             f"ground truth ({record['skipped']} forfeited or void games left out):", "",
             f"- transition accuracy {_rate(record.get('transition_accuracy'))}"
             f"{perfect_bound_note(record.get('transitions'), record.get('matches'))}; "
             f"checks passed {record['checks']}"]
    if "inference_checks" in record:
        lines.append(f"- inference accuracy on its own seat {_rate(record.get('inference_accuracy'))}; checks "
                     f"passed {record['inference_checks']}")
    lines += [f"- stopped: {record[k]}" for k in ("error", "inference_error") if record.get(k)]
    return lines


def perfect_bound_note(counts: Any, games: Any) -> str:
    """What a perfect score bounds, from ``"passed/checked"`` over ``games`` games, per check and per game
    (``cwm.stats.perfect_score_note``)."""
    passed, _, total = str(counts).partition("/")
    if not (passed.isdecimal() and total.isdecimal() and len(passed) < 20 and len(total) < 20):
        return ""
    return perfect_score_note(int(passed), int(total), games=games if type(games) is int else None)


def posterior_lines(record: dict[str, Any]) -> list[str]:
    """The beliefs section: the inference's posterior distance off- and on-policy, each with its interval,
    its draws and the smallest distance they could detect."""
    if isinstance(record.get("skipped"), str):  # a game whose true posterior cannot be computed
        return ["The posterior check was not run.", "", f"- not checked: {clean(record['skipped'], limit=300)}"]
    lines = ["Total-variation distance between the inference function's draws of the hidden information and "
             f"its true posterior, assuming opponents {clean(str(record.get('opponent_model', OPPONENT_MODEL)), limit=120)}; the "
             "interval holds for all states together (Bretagnolle-Huber-Carol, Bonferroni); *detectable* is the "
             "smallest distance these draws would show (a lower bound above 0) at the same confidence.", ""]
    for where, what in (("off_policy", "off-policy (states of uniformly random games)"),
                        ("on_policy", "on-policy (states the CWM agent met in the arena)")):
        part = record.get(where)
        lines.append(f"- {what}: " + (_posterior_figure(part) if isinstance(part, dict) else "no finished match"))
    rows = record.get("by_opponent")
    for name, row in sorted(rows.items() if isinstance(rows, dict) else []):
        if isinstance(row, dict) and type(row.get("states")) is int:  # a results folder is not trusted
            policy = "its real policy" if row.get("model_is_its_policy") is True else "an assumption for this opponent"
            lines.append(f"  - against `{clean(str(name), limit=80)}`: TV {_num(row.get('tv'))} [{_num(row.get('lo'))}, "
                         f"{_num(row.get('hi'))}] over {row['states']} states; detectable "
                         f"{_num(row.get('detectable'))}; the opponent model is {policy}")
    return lines


def _posterior_figure(part: dict[str, Any]) -> str:
    found = part.get("states")
    states: list[Any] = list(found) if isinstance(found, (list, tuple)) else []  # a tuple before JSON
    draws = sum(int(_finite(s.get("draws")) or 0) if isinstance(s, dict) else 0 for s in states)
    return (f"TV {_num(part.get('tv'))} [{_num(part.get('lo'))}, {_num(part.get('hi'))}] over "
            f"{len(states)} states ({draws:,} draws); detectable {_num(part.get('detectable'))}; inference "
            f"accuracy {_num(part.get('accuracy'))}{_verdict(part)}")


def _verdict(part: dict[str, Any]) -> str:
    lo = _finite(part.get("lo"))
    if lo is None:
        return ""
    if lo > 0:
        return ": the belief is shown wrong"
    confidence = _finite(part.get("confidence"))
    level = f"{confidence:.0%}" if confidence is not None else "the stated"
    return (f": no wrong belief shown (one off by {_num(part.get('detectable'))} or more at every state would "
            f"have been, at {level} confidence)")


def _num(x: Any) -> str:
    value = _finite(x)
    return "n/a" if value is None else f"{value:.3f}"


def _finite(x: Any) -> float | None:
    """``x`` as a float where it is a finite number (a float, or an int small enough for one); ``None`` for
    anything else a damaged or hostile results file may hold (text, a list, NaN, a 400-digit integer)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    try:
        value = float(x)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def _rate(x: Any) -> str:
    return f"{x:.4f}" if isinstance(x, float) else "n/a"


def _possibly_paid(synthesis: dict[str, Any]) -> str:
    n = synthesis.get("possibly_paid_calls") or 0
    return f", including {n} request(s) possibly paid: in flight when a session stopped" if n else ""
